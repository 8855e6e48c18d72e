/**
 * Cases that pass the schema and fail later: text the database refuses, JSON too deep to serialise,
 * bad config_yaml.
 */
import { JSON_CT, nest, type Case, type Expect, type Targets } from './operations.ts';

// ---- text PostgreSQL refuses, deep JSON in free-form
// objects -----------------------------------------------

/** Bodies that pass the schema but hold text PostgreSQL cannot store: the error mapper must answer 400. */
export function storageCases(t: Targets): Case[] {
  const run = `/experiments/${t.experimentId}/variations/1/runs/1`;
  const targets: [string, string, string, (s: string) => unknown][] = [
    ['experiment name', 'POST', '/experiments', (s) => ({ name: s })],
    ['experiment description', 'POST', '/experiments', (s) => ({ name: 'probe', description: s })],
    ['draft experiment hypothesis (edit)', 'PATCH', `/experiments/${t.draftId}`, (s) => ({ hypothesis: s })],
    ['retraction reason', 'POST', `/experiments/${t.experimentId}/retract`, (s) => ({ reason: s })],
    [
      'config_yaml, in a comment',
      'POST',
      `/experiments/${t.draftId}/variations`,
      (s) => ({ config_yaml: `lr: 0.1 # ${s}\n` }),
    ],
    [
      'variation name',
      'POST',
      `/experiments/${t.draftId}/variations`,
      (s) => ({ config_yaml: 'lr: 0.1\n', name: s }),
    ],
    ['variation name (edit)', 'PATCH', `/experiments/${t.draftId}/variations/1`, (s) => ({ name: s })],
    ['run environment (jsonb), a value', 'POST', `${run}/start`, (s) => ({ environment: { os: s } })],
    ['run environment (jsonb), a key', 'POST', `${run}/start`, (s) => ({ environment: { [s]: 1 } })],
    ['organization name', 'POST', '/organizations', (s) => ({ slug: 'probe-org', name: s })],
    [
      'member email',
      'POST',
      `/organizations/${t.organizationId}/members`,
      (s) => ({ email: `${s}@example.test` }),
    ],
    ['API key description', 'POST', '/api-keys', (s) => ({ description: s, scopes: ['experiments:read'] })],
    ['user name', 'POST', '/admin/users', (s) => ({ email: 'probe@example.test', name: s })],
    [
      'sweep name prefix (draft experiment)',
      'POST',
      `/experiments/${t.draftId}/sweeps`,
      (s) => ({ base_yaml: 'lr: 0.1\n', grid: { lr: [0.1] }, name_prefix: s }),
    ],
  ];
  // name, the text, the same in a query string: percent-encoded UTF-8, or the CESU-8 bytes of a surrogate,
  // which decode to no lone surrogate at all (a harmless search for odd text may then answer 200).
  const texts: [string, string, string, Expect][] = [
    ['`\\u0000`', 'a\u0000b', 'a%00b', { status: [400], code: ['invalid_value'] }],
    ['lone surrogate `\\ud800`', 'a\ud800b', 'a%ED%A0%80b', { allow2xx: true }],
    ['reversed surrogate pair `\\udc00\\ud800`', '\udc00\ud800', '%ED%B0%80%ED%A0%80', { allow2xx: true }],
  ];
  const cases: Case[] = [];
  for (const [what, text, query, queryExpect] of texts) {
    for (const [field, method, url, body] of targets) {
      const op = `${method} ${url}`;
      cases.push({
        group: 'storage',
        name: field,
        column: what,
        op,
        method,
        url,
        rawBody: JSON.stringify(body(text)),
        headers: JSON_CT,
        expect: { status: [400], code: ['invalid_value'] },
      });
    }
    cases.push({
      group: 'storage',
      name: 'experiment search `q` (percent-encoded)',
      column: what,
      op: 'GET /experiments',
      method: 'GET',
      url: `/experiments?q=${query}`,
      expect: queryExpect,
    });
  }
  return cases;
}

/** Free-form JSON (a run's environment, stored as jsonb) nested deeper than JSON.stringify can serialise. */
export function nestingCases(t: Targets): Case[] {
  const url = `/experiments/${t.experimentId}/variations/1/runs/1/start`;
  return (
    [
      ['environment holding 10,000 nested objects', nest(10_000, '{"a":', '}')],
      ['environment holding 10,000 nested arrays', nest(10_000, '[', ']')],
    ] as const
  ).map(([name, inner]) => ({
    group: 'nesting',
    name,
    op: `POST ${url}`,
    method: 'POST',
    url,
    rawBody: `{"environment":{"a":${inner}}}`,
    headers: JSON_CT,
    expect: { status: [400], code: ['too_deeply_nested'] },
  }));
}

// ---- config_yaml -----------------------------------------------------------------------------------------

const laughs = [
  'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  ...'bcdefghi'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');
const bigMapping = Array.from(
  { length: 30_000 },
  (_, i) => `key_${String(i).padStart(5, '0')}: value_${i}_xxxxxx`,
).join('\n'); // ~900 KB

const YAML: [string, string, 'invalid_yaml' | 'invalid_config' | 'config_too_large', boolean][] = [
  // name, config_yaml, code, names line and column
  ['unclosed flow sequence', 'lr: [1, 2\n', 'invalid_yaml', true],
  ['unterminated quoted string', 'lr: "0.1\n', 'invalid_yaml', true],
  ['bad indentation', 'a: 1\n  b: 2\n', 'invalid_yaml', true],
  ['tab indentation', 'a:\n\tb: 1\n', 'invalid_yaml', true],
  ['duplicate top-level key', 'lr: 1\nlr: 2\n', 'invalid_yaml', true],
  ['duplicate nested key', 'opt:\n  lr: 1\n  lr: 2\n', 'invalid_yaml', true],
  ['keys `1` and `"1"` (the same JSON key)', '1: a\n"1": b\n', 'invalid_yaml', true],
  ['undefined alias', 'a: *nowhere\n', 'invalid_yaml', false],
  ['two documents', 'a: 1\n---\nb: 2\n', 'invalid_yaml', true],
  // Measured before it is expanded: its JSON would pass the body limit many times over.
  ['billion laughs (9 levels of 9 aliases)', laughs, 'config_too_large', false],
  ['`.inf`', 'lr: .inf\n', 'invalid_config', false],
  ['`-.inf`', 'lr: -.inf\n', 'invalid_config', false],
  ['`.nan`', 'lr: .nan\n', 'invalid_config', false],
  ['`!!binary`', 'blob: !!binary aGVsbG8=\n', 'invalid_config', false],
  ['`!!set`', 'tags: !!set {a, b}\n', 'invalid_config', false],
  ['`!!timestamp`', 'at: !!timestamp 2001-12-14\n', 'invalid_config', false],
  ['NUL inside a value', 'a: "x\\0y"\n', 'invalid_config', false],
  ['top-level list', '- a\n- b\n', 'invalid_config', true],
  ['top-level scalar', '42\n', 'invalid_config', true],
  ['`accelerate:` not a mapping', 'accelerate: 5\n', 'invalid_config', false],
  ['`launch:` a list', 'launch: [a, b]\n', 'invalid_config', false],
  ['10,000 nested flow sequences', `a: ${nest(10_000, '[', ']', '')}\n`, 'invalid_yaml', true],
  ['5,000 nested flow mappings', `a: ${nest(5_000, '{a: ', '}')}\n`, 'invalid_yaml', true],
  ['900 KB mapping, syntax error on the last line', `${bigMapping}\nlast: [\n`, 'invalid_yaml', true],
  [
    '900 KB mapping, duplicate key on the last line',
    `${bigMapping}\nkey_00007: again\n`,
    'invalid_yaml',
    true,
  ],
];

export function yamlCases(t: Targets): Case[] {
  const targets: [string, string, (text: string) => unknown][] = [
    ['POST', `/experiments/${t.draftId}/variations`, (text) => ({ config_yaml: text })],
    ['PATCH', `/experiments/${t.draftId}/variations/1`, (text) => ({ config_yaml: text })],
    ['POST', `/experiments/${t.draftId}/sweeps`, (text) => ({ base_yaml: text, grid: { seed: [1, 2] } })],
  ];
  return YAML.flatMap(([name, text, code, lineColumn]) =>
    targets.map(([method, url, body]) => ({
      group: 'yaml',
      name,
      op: `${method} ${url}`,
      method,
      url,
      rawBody: JSON.stringify(body(text)),
      headers: JSON_CT,
      expect: { status: [code === 'config_too_large' ? 413 : 400], code: [code], lineColumn },
    })),
  );
}
