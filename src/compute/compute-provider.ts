// One interface for every place a managed run can execute; the saga only ever sees this.
import type { LaunchAuthor, LaunchConfig, LaunchProvider, RunnableLaunchConfig } from '@assay/contract';

/** The providers are the tags of the contract's LaunchConfig: one compute provider per member. */
export type ComputeKind = LaunchProvider;

/** Who stands behind a launch: the provisioning user, and the user who last wrote the launch block. */
export type LaunchPeople = {
  /** Whether the user who provisioned the run is an admin: the `local` provider may serve admins only. */
  provisionedByAdmin: boolean;
  /** Who wrote the variation's launch block; null when unknown (refused where authorship matters). */
  launchAuthor: LaunchAuthor | null;
};

/**
 * `preempted`: the provider took the instance back (a spot interruption, a Slurm preemption or requeue); the
 * run ends `preempted` and recovery resumes it. describe answers it (rather than undefined) for such an
 * instance, so the watch can tell it from a crash.
 */
export type InstanceState = 'pending' | 'running' | 'stopped' | 'terminated' | 'preempted' | 'unknown';

export type ProvisionRequest = LaunchPeople & {
  /** The workflow id: provisioning twice with it yields the same instance. */
  idempotencyKey: string;
  /**
   * SERVICE_SERVER_URL, SERVICE_EXCHANGE_TOKEN (one-time: the runner trades it for its worker key at start),
   * SERVICE_EXPERIMENT_ID, SERVICE_VARIATION, SERVICE_RUN.
   */
  env: Record<string, string>;
  /** The variation's launch block (the contract's LaunchConfig), its command known to be there. */
  launch: RunnableLaunchConfig;
  /** Extra labels for the instance; never secrets. */
  tags: Record<string, string>;
  /**
   * `local`: the GPU ids the compute queue granted the run (its CUDA_VISIBLE_DEVICES); undefined where the
   * host has no GPU slots.
   */
  gpuIds?: number[];
  /**
   * The run has not started: an instance of this key that has ended never ran its command (or, if its runner
   * got as far as the worker key, the service refuses a second one), so `local` starts a new one in its
   * place instead of answering the ended one. That instance is what a worker killed between recording an
   * instance and releasing it leaves (local-provider.ts).
   */
  replaceEnded?: boolean;
};

export type InstanceInfo = {
  provider: ComputeKind;
  instanceId: string;
  state: InstanceState;
};

export interface ComputeProvider {
  readonly kind: ComputeKind;
  /** Throws ProvisionRefusedError when the operator's policy refuses this launch; provision checks it too. */
  checkLaunch(launch: LaunchConfig, people: LaunchPeople): void;
  /**
   * Starts the instance, or returns the one already started (in any state, unless `replaceEnded`) for this
   * key.
   */
  provision(req: ProvisionRequest): Promise<InstanceInfo>;
  /**
   * The live instance for this key; undefined when there is none or it is terminated; state `preempted` when
   * the provider took it back. Throws when the status check itself fails (never undefined for that).
   */
  describe(idempotencyKey: string): Promise<InstanceInfo | undefined>;
  /** Stops the instance for good; an unknown or already-gone instance is success. */
  terminate(idempotencyKey: string): Promise<void>;
}

/** A block tagged for another provider than this one: it would not run as its author meant. */
export function providerMismatch(launch: LaunchConfig, kind: ComputeKind): string | undefined {
  if (!('provider' in launch) || launch.provider === undefined || launch.provider === kind) return undefined;
  return `launch.provider is ${launch.provider}, but this server provisions managed runs on ${kind} (ASSAY_COMPUTE)`;
}

/** A launch that can never succeed as given (bad command, no image): retrying will not help. */
export class LaunchConfigError extends Error {
  override name = 'LaunchConfigError';
}

/**
 * The operator's policy refuses this launch (a provider, an image, a subnet…): retrying will not help either.
 */
export class ProvisionRefusedError extends LaunchConfigError {
  override name = 'ProvisionRefusedError';
}

/** The command as an argv: a string is a shell command line, as users write it in launch_config. */
export function commandArgv(command: string | string[]): string[] {
  const argv = typeof command === 'string' ? ['sh', '-c', command] : command;
  if (argv.length === 0 || argv[0] === '' || (typeof command === 'string' && command.trim() === '')) {
    throw new LaunchConfigError('launch_config.command is empty');
  }
  return [...argv];
}

/**
 * The command's environment: launch_config.env below the injected variables, so a run cannot be
 * pointed elsewhere.
 */
export function launchEnv(req: ProvisionRequest): Record<string, string> {
  return { ...req.launch.env, ...req.env };
}
