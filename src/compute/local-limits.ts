// `launch.cpus` and `launch.memory_mb` on `local`: a cgroup per instance, where the kernel lets the service
// make one (root, cgroup v1's cpu and memory hierarchies or v2 with those controllers).
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { LaunchConfig } from '@assay/contract';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** Our instances' cgroups live under this child of each hierarchy. */
const PARENT = 'assay';
const CFS_PERIOD_US = 100_000;

/** Where one controller's instance cgroups are made, and of which cgroup version. */
type Controller = { parent: string; version: 1 | 2 };

export interface LocalLimits {
  readonly cpu: Controller | undefined;
  readonly memory: Controller | undefined;
  /** Why a controller is missing: named in the refusal of a launch that asks for it. */
  readonly why: string;
}

/** What launch blocks may ask of this machine's kernel; detected once, at start. */
export function detectLocalLimits(root: string = CGROUP_ROOT): LocalLimits {
  if (process.getuid?.() !== 0)
    return { cpu: undefined, memory: undefined, why: 'the service does not run as root' };
  if (existsSync(path.join(root, 'cgroup.controllers'))) return detectV2(root);
  const cpu = v1Controller(path.join(root, 'cpu'), 'cpu.cfs_quota_us');
  const memory = v1Controller(path.join(root, 'memory'), 'memory.limit_in_bytes');
  const missing = [cpu ? undefined : 'cpu', memory ? undefined : 'memory'].filter(Boolean);
  return {
    cpu,
    memory,
    why: missing.length ? `no writable cgroup ${missing.join(' or ')} controller under ${root}` : '',
  };
}

function v1Controller(dir: string, file: string): Controller | undefined {
  try {
    if (!existsSync(path.join(dir, file))) return undefined;
    accessSync(dir, constants.W_OK);
    mkdirSync(path.join(dir, PARENT), { recursive: true });
    return { parent: path.join(dir, PARENT), version: 1 };
  } catch {
    return undefined;
  }
}

function detectV2(root: string): LocalLimits {
  try {
    const available = readFileSync(path.join(root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    const wanted = ['cpu', 'memory'].filter((c) => available.includes(c));
    const parent = path.join(root, PARENT);
    mkdirSync(parent, { recursive: true });
    // A child's controllers are those its parent hands down; a container whose own processes sit in its
    // cgroup root cannot hand them down (no internal processes), and the writes fail.
    for (const dir of [root, parent])
      writeFileSync(path.join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
    const controller = { parent, version: 2 as const };
    const cpu = wanted.includes('cpu') ? controller : undefined;
    const memory = wanted.includes('memory') ? controller : undefined;
    return {
      cpu,
      memory,
      why: cpu && memory ? '' : `cgroup v2 at ${root} lacks the cpu or memory controller`,
    };
  } catch (error) {
    return {
      cpu: undefined,
      memory: undefined,
      why: `cgroup v2 at ${root} cannot delegate cpu and memory (${(error as Error).message})`,
    };
  }
}

type Resources = { cpus?: number; memory_mb?: number };
const resources = (launch: LaunchConfig): Resources => launch as Resources;

/** Why this launch cannot have the limits it asks for here, or undefined. */
export function localLimitRefusal(
  limits: LocalLimits,
  launch: LaunchConfig,
): { message: string; field: string } | undefined {
  const { cpus, memory_mb } = resources(launch);
  const refuse = (field: string, controller: string) => ({
    field,
    message: `${field} needs the kernel's cgroup ${controller} controller, which this machine does not let the service use (${limits.why}); leave ${field} out, or run the service as root where cgroups are writable (docs/production.md, "The local provider's sandbox")`,
  });
  if (cpus !== undefined && !limits.cpu) return refuse('launch.cpus', 'cpu');
  if (memory_mb !== undefined && !limits.memory) return refuse('launch.memory_mb', 'memory');
  return undefined;
}

/**
 * Makes the instance's cgroups with the launch's limits; answers their directories (to remove later) and
 * the cgroup.procs files the instance joins before it execs. Nothing when the launch asks for no limit.
 */
export function createInstanceCgroups(
  limits: LocalLimits,
  name: string,
  launch: LaunchConfig,
): { dirs: string[]; procs: string[] } {
  const { cpus, memory_mb } = resources(launch);
  const dirs = new Set<string>();
  const write = (controller: Controller, file: string, value: string, optional = false) => {
    const dir = path.join(controller.parent, name);
    mkdirSync(dir, { recursive: true });
    dirs.add(dir);
    try {
      writeFileSync(path.join(dir, file), value);
    } catch (error) {
      // Swap accounting is often off: the memory limit alone still holds.
      if (!optional) throw error;
    }
  };
  if (cpus !== undefined && limits.cpu) {
    const quota = String(Math.max(1000, Math.round(cpus * CFS_PERIOD_US)));
    if (limits.cpu.version === 1) {
      write(limits.cpu, 'cpu.cfs_period_us', String(CFS_PERIOD_US));
      write(limits.cpu, 'cpu.cfs_quota_us', quota);
    } else write(limits.cpu, 'cpu.max', `${quota} ${CFS_PERIOD_US}`);
  }
  if (memory_mb !== undefined && limits.memory) {
    const bytes = String(memory_mb * 1024 * 1024);
    if (limits.memory.version === 1) {
      write(limits.memory, 'memory.limit_in_bytes', bytes);
      write(limits.memory, 'memory.memsw.limit_in_bytes', bytes, true);
    } else {
      write(limits.memory, 'memory.max', bytes);
      write(limits.memory, 'memory.swap.max', '0', true);
    }
  }
  return { dirs: [...dirs], procs: [...dirs].map((dir) => path.join(dir, 'cgroup.procs')) };
}

/** Removes an ended instance's cgroups; one still holding a process stays (removed on a later look). */
export function removeInstanceCgroups(dirs: readonly string[] | undefined): void {
  for (const dir of dirs ?? []) {
    try {
      rmdirSync(dir);
    } catch {
      // ENOENT: removed already; EBUSY: a process is still in it.
    }
  }
}
