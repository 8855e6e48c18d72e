import { randomUUID } from 'node:crypto';
import os from 'node:os';

/** The uploader instance working on an upload: the token tells instances apart even inside one process. */
export interface Owner {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

/**
 * How often an owner refreshes its uploads' heartbeat, and after how long without one they count
 * as abandoned.
 */
export const HEARTBEAT_MS = 10_000;
export const STALE_AFTER_MS = 120_000;

export function newOwner(): Owner {
  return { pid: process.pid, host: os.hostname(), token: randomUUID() };
}

export interface Lease {
  ownerPid: number | null;
  ownerHost: string | null;
  ownerToken: string | null;
  heartbeatAt: number | null;
}

/**
 * Whether `me` may take an upload over: nobody holds it, I do, its holder's process is gone (same host only:
 * a pid means nothing elsewhere), or its holder stopped beating (another host, or a pid reused by
 * a stranger).
 */
export function mayClaim(lease: Lease, me: Owner, now: number, staleAfterMs = STALE_AFTER_MS): boolean {
  if (lease.ownerToken === null || lease.ownerToken === me.token) return true;
  if (lease.ownerHost === me.host && lease.ownerPid !== null && !processAlive(lease.ownerPid)) return true;
  return lease.heartbeatAt === null || now - lease.heartbeatAt > staleAfterMs;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0 only checks that the process exists
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists, but belongs to another user
  }
}
