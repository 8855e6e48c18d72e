// The compute queue's rule, pure: who goes next, and who fits now. The service (compute-queue.ts) reads the
// queue under its lock, asks here, and writes the grants.

export interface WaitingRun {
  runId: string;
  /** The user who provisioned it; null for runs that predate that record (one user of their own). */
  userId: string | null;
  priority: number;
  gpus: number;
  /** Milliseconds since the epoch. */
  enqueuedAt: number;
}

export interface HeldSlot {
  userId: string | null;
  gpuIds: readonly number[];
}

export interface Capacity {
  maxRuns: number;
  gpuIds: readonly number[];
}

export interface QueueState {
  waiting: readonly WaitingRun[];
  held: readonly HeldSlot[];
  /** Each user's newest grant (ms since the epoch), kept after their runs ended. */
  lastGrant: ReadonlyMap<string, number>;
}

const userKey = (userId: string | null) => userId ?? '';

/**
 * Every waiting run in the order they start: higher priority first; within a priority, users take turns
 * (the user holding the fewest slots goes first, then the one whose last grant is oldest, a user never
 * granted first of all); within a user, first come first served. The turns count the runs placed ahead as
 * if they were granted already, so a position is where the run would start if nothing else changed.
 */
export function queueOrder({ waiting, held, lastGrant }: QueueState): WaitingRun[] {
  const holding = new Map<string, number>();
  for (const h of held) holding.set(userKey(h.userId), (holding.get(userKey(h.userId)) ?? 0) + 1);
  const turns = new Map(lastGrant);
  const fifo = [...waiting].sort((a, b) => a.enqueuedAt - b.enqueuedAt || a.runId.localeCompare(b.runId));
  const priorities = [...new Set(fifo.map((w) => w.priority))].sort((a, b) => b - a);
  const order: WaitingRun[] = [];
  // Placed runs count as grants later than any real one, in the order placed.
  let tick = Math.max(0, ...turns.values()) + 1;
  for (const priority of priorities) {
    // Each user's runs at this priority, oldest first.
    const queues = new Map<string, WaitingRun[]>();
    for (const w of fifo) {
      if (w.priority !== priority) continue;
      const key = userKey(w.userId);
      queues.set(key, [...(queues.get(key) ?? []), w]);
    }
    while (queues.size > 0) {
      let next: [string, WaitingRun[]] | undefined;
      for (const entry of queues) if (!next || before(entry, next)) next = entry;
      const [key, runs] = next!;
      order.push(runs.shift()!);
      if (runs.length === 0) queues.delete(key);
      holding.set(key, (holding.get(key) ?? 0) + 1);
      turns.set(key, tick++);
    }
  }
  return order;

  function before([a, as]: [string, WaitingRun[]], [b, bs]: [string, WaitingRun[]]): boolean {
    const byHolding = (holding.get(a) ?? 0) - (holding.get(b) ?? 0);
    if (byHolding !== 0) return byHolding < 0;
    const byTurn = (turns.get(a) ?? -1) - (turns.get(b) ?? -1);
    if (byTurn !== 0) return byTurn < 0;
    return as[0]!.enqueuedAt - bs[0]!.enqueuedAt < 0;
  }
}

/**
 * The runs that start now, with their GPUs: the queue's order taken while a run slot and the head's GPUs are
 * free. Strict: a head that does not fit stops the grants, so a large GPU ask is never overtaken for ever by
 * smaller ones. The lowest free ids go first; two runs never hold the same id.
 */
export function grantsNow(state: QueueState, capacity: Capacity): { runId: string; gpuIds: number[] }[] {
  const taken = new Set(state.held.flatMap((h) => h.gpuIds));
  const free = [...capacity.gpuIds].filter((id) => !taken.has(id)).sort((a, b) => a - b);
  let slots = capacity.maxRuns - state.held.length;
  const grants: { runId: string; gpuIds: number[] }[] = [];
  for (const run of queueOrder(state)) {
    if (slots <= 0 || run.gpus > free.length) break;
    grants.push({ runId: run.runId, gpuIds: free.splice(0, run.gpus) });
    slots -= 1;
  }
  return grants;
}
