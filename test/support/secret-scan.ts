/**
 * Collects the secrets a test handles (API keys and their secret parts, access tokens, presigned URLs and
 * their signatures, configured credentials) and finds them, or anything shaped like them, in log lines.
 */

const API_KEY = /sk_(?:user|agent|worker|exchange)_[0-9a-f]{32}[A-Za-z0-9_-]{43}/;
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;
/** Shapes that are a leak wherever they appear, whoever minted them. */
const SHAPES: [string, RegExp][] = [
  ['an API key', API_KEY],
  ['an access token (JWT)', JWT],
  ['an S3 presigned signature', /X-Amz-Signature=/i],
  ['a presigned URL signature', /[?&](?:signature|sig)=[A-Za-z0-9_%-]{8,}/i],
  ['a bearer credential', /\bbearer\s+(?!\[redacted\])[A-Za-z0-9._~+/=-]{8,}/i],
  ['an Authorization header value', /"authorization"\s*:\s*"(?!\[redacted\])/i],
];
const SIGNATURE_PARAMS = ['signature', 'X-Amz-Signature', 'sig'];

export class SecretRegistry {
  readonly #known = new Map<string, string>();

  /** A secret value; values under 12 characters would match by chance and are kept out. */
  add(value: string, what: string): void {
    if (value.length >= 12 && !this.#known.has(value)) this.#known.set(value, what);
  }

  /**
   * A bearer token: the whole of it, and the part that is secret on its own (an API key's secret, a
   * JWT's signature).
   */
  addToken(token: string, what: string): void {
    this.add(token, what);
    if (token.startsWith('sk_')) this.add(token.slice(-43), `the secret part of ${what}`);
    const parts = token.split('.');
    if (parts.length === 3 && parts[2]) this.add(parts[2], `the signature of ${what}`);
  }

  /** A presigned URL: the whole URL and its signature. */
  addUrl(url: string, what: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return;
    }
    for (const name of SIGNATURE_PARAMS) {
      const value = parsed.searchParams.get(name);
      if (value) this.add(value, `the ${name} of ${what}`);
    }
    if (SIGNATURE_PARAMS.some((name) => parsed.searchParams.has(name))) this.add(url, what);
  }

  /** Registers every token and presigned URL anywhere in a response body. */
  collect(body: unknown, where: string): void {
    if (typeof body === 'string') {
      const token = API_KEY.exec(body)?.[0] ?? JWT.exec(body)?.[0];
      if (token) this.addToken(token, `a token in ${where}`);
      if (/^https?:\/\//.test(body)) this.addUrl(body, `a URL in ${where}`);
    } else if (Array.isArray(body)) {
      for (const item of body) this.collect(item, where);
    } else if (body && typeof body === 'object') {
      for (const value of Object.values(body)) this.collect(value, where);
    }
  }

  get size(): number {
    return this.#known.size;
  }

  /**
   * Every line that holds a known secret or a secret's shape, as `source:line: what` (the values themselves
   * left out).
   */
  scan(lines: string[], source: string): string[] {
    const findings: string[] = [];
    lines.forEach((line, i) => {
      for (const [value, what] of this.#known)
        if (line.includes(value)) findings.push(`${source}:${i + 1}: ${what}`);
      for (const [what, shape] of SHAPES)
        if (shape.test(line))
          findings.push(`${source}:${i + 1}: ${what} (by shape): ${redact(line.slice(0, 300))}`);
    });
    return findings;
  }
}

/** A line fit to print in a failure message: long base64url and hex runs cut short. */
function redact(line: string): string {
  return line.replace(/[A-Za-z0-9_-]{24,}/g, (run) => `${run.slice(0, 6)}…`);
}
