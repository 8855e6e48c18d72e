/**
 * `attachment` with the filename twice (RFC 6266): an ASCII fallback for old clients, and the exact name
 * percent-encoded as UTF-8 in `filename*`. Quotes, backslashes and control characters never reach the header.
 */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
