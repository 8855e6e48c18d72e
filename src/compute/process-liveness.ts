// Whether a recorded process group still runs, robust to the leader's pid being reused by another program.
import { readdirSync, readFileSync } from 'node:fs';

/** The process's start time from /proc (field 22 of stat); undefined when it is gone or /proc is absent. */
export function processStartTime(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** Fields 3… of /proc/<pid>/stat (state, ppid, pgrp, …); undefined when the process is gone. */
function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; the fields after its last ')' are plain.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Whether the group has a member that is not a zombie, from /proc; undefined without /proc.
 * kill(-pgid, 0) alone also counts zombies, which a slow-reaping init (containers) keeps around for a while.
 */
function groupHasLiveMember(pgid: number): boolean | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    const fields = procStat(entry);
    return fields !== undefined && fields[2] === String(pgid) && fields[0] !== 'Z' && fields[0] !== 'X';
  });
}

/**
 * True while any member of the group lives and the pid still names the process we started. Called on every
 * watch poll and many times while terminating, so the usual answers take one read: the leader itself lives
 * (it still leads its group), or the group has no member at all. Only a group whose leader is gone or a
 * zombie is looked for in all of /proc (hundreds of reads, milliseconds on the worker's event loop).
 */
export function groupAlive(pid: number, startTime: string | undefined): boolean {
  const leader = procStat(pid);
  const current = leader?.[19];
  if (current !== undefined && startTime !== undefined && current !== startTime) return false;
  if (leader && leader[2] === String(pid) && leader[0] !== 'Z' && leader[0] !== 'X') return true;
  try {
    process.kill(-pid, 0);
  } catch {
    // ESRCH: gone; EPERM: the group id now belongs to another user's processes, so ours are gone too.
    return false;
  }
  return groupHasLiveMember(pid) ?? true;
}

/** SIGTERM to the group, then SIGKILL once `graceMs` has passed without it going away. */
export async function killGroup(pid: number, startTime: string | undefined, graceMs: number): Promise<void> {
  if (!groupAlive(pid, startTime)) return;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (!groupAlive(pid, startTime)) return;
  }
  signalGroup(pid, 'SIGKILL');
  // SIGKILL cannot be refused, but the kernel takes a moment to tear the group down.
  for (let i = 0; i < 100 && groupAlive(pid, startTime); i++)
    await new Promise((resolve) => setTimeout(resolve, 20));
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: already gone, which is what we wanted.
  }
}
