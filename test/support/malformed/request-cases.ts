/** Cases in the request line and headers: path parameters, query strings, credentials, methods. */
import {
  baseValue,
  NOWHERE,
  safe,
  urlOf,
  type Case,
  type Expect,
  type Operation,
  type Targets,
} from './operations.ts';

// ---- path parameters -------------------------------------------------------------------------------------

const PATH_VARIANTS: [string, (base: string) => string, boolean?][] = [
  ['not a UUID or number: `abc`', () => 'abc'],
  ['2^31: `2147483648`', () => '2147483648'],
  ['2^63: `9223372036854775808`', () => '9223372036854775808'],
  ['`1e309` (beyond a double)', () => '1e309'],
  ['negative: `-1`', () => '-1'],
  ['zero: `0`', () => '0'],
  ['float: `1.5`', () => '1.5'],
  ['`%00`', () => '%00'],
  ['200 characters (the router limit)', () => 'a'.repeat(200)],
  ['201 characters (over the router limit)', () => 'a'.repeat(201)],
  ['5,000 characters', () => '7'.repeat(5000)],
  ['unicode: `%E2%98%83` (☃)', () => '%E2%98%83'],
  ['emoji: `%F0%9F%92%A9`', () => '%F0%9F%92%A9'],
  ['`..%2F..%2Fadmin%2Fusers`', () => '..%2F..%2Fadmin%2Fusers'],
  ['`..`', () => '..'],
  ['broken percent-encoding: `%E0%A4%A`', () => '%E0%A4%A'],
  ['a lone `%`', () => '%'],
  ['encoded lone surrogate: `%ED%A0%80`', () => '%ED%A0%80'],
  ['`%20`', () => '%20'],
  ['`null`', () => 'null'],
  ['the real value plus junk', (base) => `${base}x`],
  ['nil UUID', () => '00000000-0000-0000-0000-000000000000'],
  ['a well-formed UUID naming nothing', () => NOWHERE],
  // Spellings the schema coerces to the real value: harmless on a GET, still stopped by the safe
  // body otherwise.
  ['the real value in upper case', (base) => base.toUpperCase(), true],
  ['`0x1`', () => '0x1', true],
  ['`1e0`', () => '1e0', true],
  ['`01`', () => '01', true],
];

export function pathCases(ops: Operation[], t: Targets): Case[] {
  return ops.flatMap((op) =>
    op.pathParams.flatMap((param) =>
      PATH_VARIANTS.map(([name, make, lenient]) => {
        const url = urlOf(op, t, { [param]: make(baseValue(op, param, t)) });
        // Clients resolve `..` before sending: a one-segment resource path becomes the root.
        const resolved = new URL(url, 'http://service').pathname;
        const root = resolved === '/';
        // `/experiments/../metrics` resolves to the Prometheus endpoint, which answers a GET when it is open.
        const prometheus = resolved === '/metrics' && op.method === 'GET';
        // `/experiments/{id}/variations/../runs` resolves to the experiment's own run list.
        const experimentRuns = /^\/experiments\/[^/]+\/runs$/.test(resolved) && op.method === 'GET';
        return {
          group: 'path',
          name,
          op: op.label,
          method: op.method,
          url,
          ...safe(op),
          // Only GET / is the web UI's redirect; other methods there are missing routes.
          expect:
            root && op.method === 'GET'
              ? { redirect: '/ui/' }
              : { allow2xx: (lenient === true && op.method === 'GET') || prometheus || experimentRuns },
        };
      }),
    ),
  );
}

// ---- query parameters ------------------------------------------------------------------------------------

const QUERY_VALUES: [string, string][] = [
  ['`abc`', 'abc'],
  ['empty', ''],
  ['`-1`', '-1'],
  ['`0`', '0'],
  ['`1.5`', '1.5'],
  ['2^31', '2147483648'],
  ['2^63', '9223372036854775808'],
  ['`1e309`', '1e309'],
  ['`%00`', '%00'],
  ['5,000 characters', '9'.repeat(5000)],
  ['broken percent-encoding `%E0%A4%A`', '%E0%A4%A'],
  ['encoded lone surrogate `%ED%A0%80`', '%ED%A0%80'],
  ['upper case `DRAFT`', 'DRAFT'],
  ['a well-formed UUID naming nothing', NOWHERE],
];

const QUERY_STRINGS: [string, string][] = [
  ['unknown parameter `zzz=1`', '?zzz=1'],
  ['`__proto__[x]=1`', '?__proto__[x]=1'],
  ['`constructor[prototype][x]=1`', '?constructor[prototype][x]=1'],
  ['separators only `?&&=&=`', '?&&=&='],
  ['1,000 parameters', `?${Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join('&')}`],
  ['a 100 KB query string', `?zzz=${'q'.repeat(100_000)}`],
];

export function queryCases(ops: Operation[], t: Targets): Case[] {
  const cases: Case[] = [];
  const add = (op: Operation, name: string, query: string, allow2xx: boolean) =>
    cases.push({
      group: 'query',
      name,
      op: op.label,
      method: op.method,
      url: urlOf(op, t, {}, query),
      ...safe(op),
      expect: { allow2xx },
    });
  for (const op of ops) {
    const lenient = op.method === 'GET';
    for (const param of op.queryParams) {
      for (const [name, value] of QUERY_VALUES)
        add(op, `declared parameter = ${name}`, `?${param}=${value}`, lenient);
      add(op, 'declared parameter repeated', `?${param}=1&${param}=2`, lenient);
      add(op, 'declared parameter without a value', `?${param}`, lenient);
    }
    for (const [name, query] of QUERY_STRINGS) add(op, name, query, lenient);
  }
  return cases;
}

// ---- credentials, methods --------------------------------------------------------------------------------

export function headerCases(ops: Operation[], t: Targets): Case[] {
  const variants: [string, string | null | undefined, Expect, Record<string, string>?][] = [
    // Public routes (health) answer 2xx without credentials; every other route 401.
    ['no Authorization header', null, { status: [401], allow2xx: true }],
    ['`Basic` scheme', 'Basic YWRtaW46YWRtaW4=', { status: [401], allow2xx: true }],
    ['`Bearer` and nothing', 'Bearer ', { status: [401], allow2xx: true }],
    ['a key that was never minted', `Bearer sk_user_${'0'.repeat(40)}`, { status: [401], allow2xx: true }],
    ['a 9,000-character token', `Bearer ${'k'.repeat(9000)}`, { status: [401], allow2xx: true }],
    [
      'hostile `x-request-id` (`../../etc/passwd`), valid key',
      undefined,
      { allow2xx: true, requestIdReplaced: true },
      { 'x-request-id': '../../etc/passwd' },
    ],
  ];
  return ops.flatMap((op) =>
    variants.map(([name, authorization, expect, headers]) => {
      const s = safe(op);
      return {
        group: 'headers',
        name,
        op: op.label,
        method: op.method,
        url: urlOf(op, t),
        rawBody: s.rawBody,
        headers: { ...s.headers, ...headers },
        authorization,
        expect,
      };
    }),
  );
}

export function methodCases(ops: Operation[], t: Targets): Case[] {
  const paths = [...new Map(ops.map((op) => [op.path, op])).values()];
  return paths.flatMap((op) =>
    ['PUT', 'OPTIONS']
      .filter((m) => !ops.some((o) => o.path === op.path && o.method === m))
      .map((method) => ({
        group: 'methods',
        name: `${method} on a path without it`,
        op: `${method} ${op.path}`,
        method,
        url: urlOf(op, t),
        expect: { status: [404] },
      })),
  );
}
