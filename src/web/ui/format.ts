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
