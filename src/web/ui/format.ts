/** A timestamp from the API in the reader's locale; '—' when absent. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A duration between two timestamps (the second defaults to now) in s, min or h. */
export function formatDuration(from: string | null, to: string | null): string {
  if (!from) return '—';
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/** The curl line an empty state shows for an API call the CLI has no command for ($KEY: the reader's key). */
export function curlPost(path: string, body: Record<string, unknown>): string {
  return (
    `curl -H "authorization: Bearer $KEY" -H "content-type: application/json" ` +
    `-d '${JSON.stringify(body)}' ${window.location.origin}${path}`
  );
}

/** A waiting run's place in the compute queue: "2nd of 5 (waiting for 2 GPUs)", as `assay runs show` says it. */
export function formatQueuePlace(queue: { position: number; waiting: number; gpus: number }): string {
  const gpus = queue.gpus === 0 ? 'a run slot' : `${queue.gpus} GPU${queue.gpus === 1 ? '' : 's'}`;
  return `${ordinal(queue.position)} of ${queue.waiting} (waiting for ${gpus})`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const last = n % 10;
  const suffix =
    tens >= 11 && tens <= 13 ? 'th' : last === 1 ? 'st' : last === 2 ? 'nd' : last === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}
