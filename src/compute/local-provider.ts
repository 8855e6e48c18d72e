// The embedded default: an "instance" is a detached process group running the runner (`assay run -- …`),
// sandboxed (local-sandbox.ts) as an unprivileged user where the machine allows, in cgroups with the launch's
// limits (local-limits.ts).
import type { LaunchConfig } from '@assay/contract';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, chown, constants, mkdir, open, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  commandArgv,
  launchEnv,
  providerMismatch,
  ProvisionRefusedError,
  type ComputeProvider,
  type InstanceInfo,
  type LaunchPeople,
  type ProvisionRequest,
} from './compute-provider.ts';
import { localLaunchRefusal, type LocalComputeUsers } from './local-config.ts';
import {
  createInstanceCgroups,
  localLimitRefusal,
  removeInstanceCgroups,
  type LocalLimits,
} from './local-limits.ts';
import { sandboxArgs, type LocalSandbox } from './local-sandbox.ts';
import { LocalSlots } from './local-slots.ts';
import { LocalStateFile, type Held, type LocalInstanceRecord } from './local-state.ts';
import { groupAlive, killGroup, processStartTime } from './process-liveness.ts';
import { runnerEntry } from './runner-bundle.ts';

export type LocalProviderOptions = {
  /** Holds the key → process state file and one log file per instance. */
  stateDir: string;
  /**
   * Prefix of every instance's argv; the launch command follows it. Default: `assay run --` from the runner's
   * bundle when it is fresh, else from bin/assay.js (src/compute/runner-bundle.ts).
   */
  runnerArgv?: string[];
  /**
   * Working directory of the instances (the runner writes ./outputs there). Default: a directory per key
   * under stateDir.
   */
  cwd?: string;
  /** Where PATH, HOME, the locale and TZ come from (nothing else of it passes). Default: this process's. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Whose runs may start here; default `admins`. */
  users?: LocalComputeUsers;
  /** Default: none, each instance runs as this process's user (local-config.ts decides for a deployment). */
  sandbox?: LocalSandbox;
  /** The cgroups `launch.cpus` and `launch.memory_mb` are enforced with; default: none, such launches refused. */
  limits?: LocalLimits;
  /** The service's data dir: hidden from sandboxed instances even where it lies inside the runner's code. */
  dataDir?: string;
  /** SIGTERM → SIGKILL grace of terminate. */
  graceMs?: number;
  /**
   * `slots` (the default; ignored with `runnerArgv`): runs without cgroup limits or GPUs go to long-lived
   * slot runners (local-slots.ts); `spawn`: every run is an instance of its own, as with `runnerArgv`.
   */
  runners?: 'slots' | 'spawn';
  /** `assay run` options a slot runner gives each run (e.g. `--heartbeat-interval 1`). */
  runOptions?: string[];
  /** How long a state-file lock left by a killed worker holds up the others; default 10 s. */
  lockStaleMs?: number;
};

/** An instance started but held: it runs nothing until released, and ends when abandoned or orphaned. */
type Started = Held & { record: LocalInstanceRecord };

export class LocalProvider implements ComputeProvider {
  readonly kind = 'local' as const;
  readonly #options: LocalProviderOptions;
  readonly #state: LocalStateFile;
  #runnerArgv: string[] | undefined;
  readonly #slots: LocalSlots | undefined;

  constructor(options: LocalProviderOptions) {
    this.#options = options;
    this.#state = new LocalStateFile(options.stateDir, options.lockStaleMs);
    // A runner of the caller's own (runnerArgv) is spawned per run.
    this.#slots =
      !options.runnerArgv && options.runners !== 'spawn'
        ? new LocalSlots({
            stateDir: options.stateDir,
            sandbox: options.sandbox,
            hidden: this.#hidden(),
            env: basicEnv(options.baseEnv ?? process.env),
            runOptions: options.runOptions ?? [],
          })
        : undefined;
  }

  #hidden(): string[] {
    return [this.#options.dataDir, this.#options.stateDir]
      .filter((dir) => dir !== undefined)
      .map((dir) => path.resolve(dir));
  }

  /** For the start log: how instances run here, and why not sandboxed when they are not. */
  get setup(): string {
    const { sandbox, users = 'admins' } = this.#options;
    const how =
      sandbox?.mode === 'bwrap'
        ? `sandboxed (bubblewrap) as ${sandbox.runAs.name}`
        : `not sandboxed: as this process's user (${sandbox?.reason ?? 'no sandbox given'})`;
    return `${how}; runs of ${users === 'all' ? 'every user' : 'admins only'} (ASSAY_LOCAL_COMPUTE_USERS=${users})`;
  }

  checkLaunch(launch: LaunchConfig, people: LaunchPeople): void {
    const refusal =
      providerMismatch(launch, 'local') ??
      localLaunchRefusal(this.#options.users ?? 'admins', people, this.#options.sandbox) ??
      localLimitRefusal(this.#limits, launch)?.message;
    if (refusal) throw new ProvisionRefusedError(refusal);
  }

  get #limits(): LocalLimits {
    return this.#options.limits ?? { cpu: undefined, memory: undefined, why: 'no cgroups were given to it' };
  }

  async provision(req: ProvisionRequest): Promise<InstanceInfo> {
    this.checkLaunch(req.launch, req);
    // The bundle's freshness is looked at once per provider: a stat of each of its sources.
    this.#runnerArgv ??= this.#options.runnerArgv ?? [process.execPath, runnerEntry(), 'run', '--'];
    const argv = [...this.#runnerArgv, ...commandArgv(req.launch.command)];
    return this.#state.update(async (state) => {
      const existing = state[req.idempotencyKey];
      // Even a finished instance stays the answer, unless its run never started: it must not start twice.
      if (existing) {
        const current = this.#info(req.idempotencyKey, existing);
        if (current.state !== 'terminated' || !req.replaceEnded) return [state, current];
      }
      // Recorded before it runs anything: a worker killed in between leaves a record of an instance that
      // ends without running the command, never a running one that nobody recorded.
      const started = await this.#start(req, argv);
      const info = this.#info(req.idempotencyKey, started.record);
      return [{ ...state, [req.idempotencyKey]: started.record }, info, started];
    });
  }

  async describe(idempotencyKey: string): Promise<InstanceInfo | undefined> {
    const record = await this.#state.get(idempotencyKey);
    if (!record) return undefined;
    const current = this.#info(idempotencyKey, record);
    if (current.state !== 'terminated') return current;
    removeInstanceCgroups(record.cgroups);
    return undefined;
  }

  async terminate(idempotencyKey: string): Promise<void> {
    const record = await this.#state.get(idempotencyKey);
    if (!record) return;
    const graceMs = this.#options.graceMs ?? 10_000;
    // A slot of ours stops the run and lives on. Another worker's slot (replicas sharing the state dir) is
    // killed only while it still carries this run: once the run is over it serves someone else's.
    if (record.slot && (await this.#slots?.stop(idempotencyKey, record.pid, graceMs))) return;
    if (record.slot && !carries(record)) return;
    await killGroup(record.pid, record.startTime, graceMs);
    removeInstanceCgroups(record.cgroups);
  }

  #info(key: string, record: LocalInstanceRecord): InstanceInfo {
    const slotState = record.slot ? this.#slots?.state(key, record.pid) : undefined;
    if (slotState) return { provider: 'local', instanceId: `pid-${record.pid}`, state: slotState };
    if (record.slot && !carries(record))
      return { provider: 'local', instanceId: `pid-${record.pid}`, state: 'terminated' };
    return info(record);
  }

  /** A slot runner takes the run unless it needs cgroups or GPUs (joined as root before the runner starts). */
  async #start(req: ProvisionRequest, argv: string[]): Promise<Started> {
    const { cpus, memory_mb } = req.launch as { cpus?: number; memory_mb?: number };
    if (!this.#slots || cpus !== undefined || memory_mb !== undefined || req.gpuIds?.length)
      return this.#spawn(req, argv);
    const env = instanceEnv(this.#options.baseEnv ?? process.env, req);
    const command = commandArgv(req.launch.command);
    // A slot runs the code of one launch author in one experiment (local-slots.ts, docs/production.md).
    const tenant = req.launchAuthor ? `${req.launchAuthor.id}/${req.env.SERVICE_EXPERIMENT_ID}` : undefined;
    const name = fileSafe(req.idempotencyKey);
    const { release, abandon, ...slot } = await this.#slots.start(
      req.idempotencyKey,
      name,
      tenant,
      env,
      command,
    );
    return { record: { ...slot, startedAt: new Date().toISOString(), slot: true }, release, abandon };
  }

  /** The instance waits in WRAPPER for a line on its stdin; without one (its worker gone) it exits. */
  async #spawn(req: ProvisionRequest, command: string[]): Promise<Started> {
    let argv = command;
    const name = fileSafe(req.idempotencyKey);
    const dir = path.resolve(this.#options.cwd ?? path.join(this.#options.stateDir, 'instances', name));
    await mkdir(dir, { recursive: true });
    // Its real path: the sandbox binds it there, and compares it with the real paths of what it hides.
    const cwd = await realpath(dir);
    const { sandbox } = this.#options;
    const env = instanceEnv(this.#options.baseEnv ?? process.env, req);
    if (sandbox?.mode === 'bwrap') {
      // The one place the instance may write; the service's files stay out of its reach.
      await chown(cwd, sandbox.runAs.uid, sandbox.runAs.gid);
      argv = [
        sandbox.bwrap,
        ...sandboxArgs(sandbox, {
          argv,
          cwd,
          hidden: this.#hidden(),
          gpuIds: req.gpuIds,
        }),
      ];
      Object.assign(env, { HOME: cwd, TMPDIR: '/tmp' });
    }
    const cgroups = createInstanceCgroups(this.#limits, name, req.launch);
    // bwrap must outlive a SIGTERM to the group (the runner gets it, stops its command and ends, and bwrap
    // with it); an ignored signal stays ignored across exec, and Node resets it for the commands it spawns.
    // The cgroups are joined here, as root, before anything of the run executes.
    // The wrapper would start and then fail to exec: a runner that cannot start fails provision instead.
    await assertExecutable(argv[0]!, cwd, env.PATH);
    argv = [
      '/bin/sh',
      '-c',
      WRAPPER,
      'sh',
      ...(sandbox?.mode === 'bwrap' ? ['-t'] : []),
      ...cgroups.procs,
      '--',
      ...argv,
    ];
    // The runner's output goes to a file: a pipe would die with this worker and take the runner with it.
    const log = await open(path.join(this.#options.stateDir, `${name}.log`), 'a', 0o600);
    try {
      const child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        env,
        detached: true,
        stdio: ['pipe', log.fd, log.fd],
      });
      const pid = await new Promise<number>((resolve, reject) => {
        child.once('error', reject);
        child.once('spawn', () => resolve(child.pid!));
      });
      // The instance outlives this worker; node still reaps it if it ends first.
      child.unref();
      const hold = child.stdin!;
      hold.on('error', () => undefined);
      (hold as { unref?: () => void }).unref?.();
      return {
        record: {
          pid,
          startTime: processStartTime(pid),
          startedAt: new Date().toISOString(),
          ...(cgroups.dirs.length > 0 ? { cgroups: cgroups.dirs } : {}),
        },
        release: () => hold.end('go\n'),
        abandon: () => hold.end(),
      };
    } catch (error) {
      removeInstanceCgroups(cgroups.dirs);
      throw error;
    } finally {
      await log.close();
    }
  }
}

// `sh -c WRAPPER sh [-t] [cgroup.procs…] -- argv…`: ignores SIGTERM with -t, joins the cgroups, waits for
// the line that releases it (end of input instead: its worker is gone, or did not record it), execs argv.
const WRAPPER =
  'if [ "$1" = -t ]; then trap "" TERM; shift; fi; ' +
  'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; ' +
  'read -r go || exit 125; exec "$@" < /dev/null';

/** Throws ENOENT as spawn would when `command` names no executable (a path from `cwd`, or on `searchPath`). */
async function assertExecutable(command: string, cwd: string, searchPath = ''): Promise<void> {
  const candidates = command.includes('/')
    ? [path.resolve(cwd, command)]
    : searchPath
        .split(':')
        .filter(Boolean)
        .map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return;
  }
  throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT', path: command });
}

/** What a slot runner's own environment holds: the basics a shell needs. */
function basicEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(base).filter(
      (entry): entry is [string, string] => INHERITED.test(entry[0]) && entry[1] !== undefined,
    ),
  );
}

// The service's environment holds its secrets (DATABASE_URL, S3_*, AWS_*, ASSAY_*): an instance sees only
// what a shell needs.
const INHERITED = /^(PATH|HOME|TMPDIR|TZ|LANG|LANGUAGE|LC_[A-Z_]+)$/;

/**
 * The instance's environment: the inheritable basics of `base`, then launch_config.env, then the injected
 * SERVICE_* variables and the granted GPUs.
 */
export function instanceEnv(base: NodeJS.ProcessEnv, req: ProvisionRequest): Record<string, string> {
  const inherited = Object.entries(base).filter(
    (entry): entry is [string, string] => INHERITED.test(entry[0]) && entry[1] !== undefined,
  );
  // The granted GPUs win over launch_config.env: a run sees only the devices it holds.
  const gpus: Record<string, string> =
    req.gpuIds === undefined ? {} : { CUDA_VISIBLE_DEVICES: req.gpuIds.join(',') };
  return { ...Object.fromEntries(inherited), ...launchEnv(req), ...gpus };
}

/**
 * Whether another process's slot still carries the record's run: the slot outlives the run, but the run's
 * directory leaves the slot when the run is over (local-slots.ts).
 */
function carries(record: LocalInstanceRecord): boolean {
  return record.runDir === undefined || existsSync(record.runDir);
}

function info(record: LocalInstanceRecord): InstanceInfo {
  const state = groupAlive(record.pid, record.startTime) ? 'running' : 'terminated';
  return { provider: 'local', instanceId: `pid-${record.pid}`, state };
}

/** A file name for any key: readable when the key is tame, hashed when it is not. */
function fileSafe(key: string): string {
  return /^[A-Za-z0-9._-]{1,100}$/.test(key) && !key.startsWith('.')
    ? key
    : createHash('sha256').update(key).digest('hex');
}
