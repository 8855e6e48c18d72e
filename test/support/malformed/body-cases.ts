/**
 * Cases in JSON bodies: whole bodies that are not what the route takes, and valid bodies with one
 * property broken.
 */
import {
  nest,
  SAFE_BODY,
  urlOf,
  type Case,
  type Operation,
  type Schema,
  type Targets,
} from './operations.ts';

const BODY_LIMIT = 2 * 1024 * 1024;
const MB = 'x'.repeat(1024 * 1024);

/** A valid body per operation, never sent as is: each case breaks exactly one thing in it. */
function baseBody(op: Operation, t: Targets): Record<string, unknown> {
  const bodies: Record<string, Record<string, unknown>> = {
    'POST /experiments': {
      name: 'probe',
      description: 'd',
      hypothesis: 'h',
      parent_ids: [t.experimentId],
      organization_id: 'personal',
    },
    'PATCH /experiments/{id}': { name: 'probe', description: 'd', hypothesis: 'h' },
    'POST /experiments/{id}/retract': { reason: 'probe' },
    'POST /experiments/{id}/variations': { config_yaml: 'lr: 0.1\n', name: 'probe' },
    'PATCH /experiments/{id}/variations/{n}': { config_yaml: 'lr: 0.1\n', name: 'probe' },
    'POST /experiments/{id}/variations/{n}/runs/{r}/start': { environment: { os: 'probe' } },
    'POST /experiments/{id}/variations/{n}/runs/{r}/fail': { reason: 'crash', message: 'probe' },
    'POST /api-keys': {
      description: 'probe',
      scopes: ['experiments:read'],
      kind: 'agent',
      expires_in_days: 1,
      run: { experiment_id: t.experimentId, n: 1, r: 1 },
    },
    'POST /organizations': { slug: 'probe-org', name: 'Probe' },
    'POST /organizations/{id}/members': { user_id: t.otherUserId, role: 'member' },
    'PATCH /v1/me': { default_organization_id: t.organizationId },
    'POST /admin/users': { email: 'probe@example.test', name: 'probe', admin: false },
    // At the committed experiment: a valid sweep would still be refused (409), so nothing is written.
    'POST /experiments/{id}/sweeps': {
      base_yaml: 'lr: 0.1\n',
      grid: { lr: [0.1, 0.2] },
      concurrency: 2,
      name_prefix: 'probe',
    },
    'PUT /orchestrator/runs/{run_id}/instance': { provider: 'local', instance_id: 'probe', state: 'running' },
    'POST /orchestrator/runs/{run_id}/fail': { reason: 'provision_failed', message: 'probe' },
  };
  return bodies[op.label] ?? {};
}

function propertiesOf(schema: Schema | undefined): Record<string, Schema> {
  if (!schema) return {};
  return Object.assign({}, schema.properties, ...(schema.anyOf ?? []).map((s) => s.properties ?? {}));
}

const isType = (s: Schema, type: string): boolean =>
  s.type === type || (s.anyOf ?? []).some((b) => b.type === type);

/**
 * Serialises `base` with one property replaced by raw JSON text (so `1e400` and lone surrogates
 * arrive verbatim).
 */
function withRaw(base: Record<string, unknown>, prop: string, raw: string): string {
  return JSON.stringify({ ...base, [prop]: '\u0001RAW\u0001' }).replace('"\\u0001RAW\\u0001"', () => raw);
}

const RAW_BODIES: [string, string, string | null, number[]][] = [
  // name, body, content type, statuses
  ['invalid JSON `{"a" 1}`', '{"a" 1}', 'application/json', [400]],
  ['single-quoted JSON', "{'a': 1}", 'application/json', [400]],
  ['trailing comma', '{"a": 1,}', 'application/json', [400]],
  ['truncated `{"name": "x`', '{"name": "x', 'application/json', [400]],
  ['truncated `{`', '{', 'application/json', [400]],
  ['`NaN` literal', '{"a": NaN}', 'application/json', [400]],
  ['a comment', '{/* c */}', 'application/json', [400]],
  ['whitespace only', '  \n ', 'application/json', [400]],
  ['`__proto__` key', '{"__proto__": {"x": 1}}', 'application/json', [400]],
  ['`constructor.prototype` key', '{"constructor": {"prototype": {"x": 1}}}', 'application/json', [400]],
  ['JSON `null`', 'null', 'application/json', [422]],
  ['an array', '[{}]', 'application/json', [422]],
  ['a string', '"x"', 'application/json', [422]],
  ['a number', '42', 'application/json', [422]],
  ['`true`', 'true', 'application/json', [422]],
  ['`1e400`', '1e400', 'application/json', [422]],
  ['10,000 nested objects', nest(10_000, '{"a":', '}'), 'application/json', [422]],
  ['10,000 nested arrays', nest(10_000, '[', ']'), 'application/json', [422]],
  ['unknown property', SAFE_BODY, 'application/json', [422]],
  ['NUL in a property name', '{"na\\u0000me": "x"}', 'application/json', [422]],
  [
    'over the body limit (2 MiB + 1 KiB)',
    JSON.stringify({ x: 'x'.repeat(BODY_LIMIT + 1024) }),
    'application/json',
    [413],
  ],
  ['text/plain holding JSON', '{"name": "x"}', 'text/plain', [415, 422]],
  [
    'multipart/form-data',
    '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n',
    'multipart/form-data; boundary=b',
    [415],
  ],
  ['application/x-www-form-urlencoded', 'name=x', 'application/x-www-form-urlencoded', [415]],
  ['application/xml', '<name>x</name>', 'application/xml', [415]],
  ['no content-type header', '{"name": "x"}', null, [415]],
];

export function bodyCases(ops: Operation[], t: Targets): Case[] {
  const cases: Case[] = [];
  for (const op of ops.filter((o) => o.body)) {
    const url = urlOf(op, t);
    const add = (
      name: string,
      rawBody: string,
      status: number[] | undefined,
      contentType: string | null = 'application/json',
    ) =>
      cases.push({
        group: 'body',
        name,
        op: op.label,
        method: op.method,
        url,
        rawBody,
        headers: contentType ? { 'content-type': contentType } : {},
        expect: { status },
      });
    for (const [name, body, contentType, status] of RAW_BODIES) add(name, body, status, contentType);
    // An empty JSON body means "no fields" (app.ts): a valid call where the schema needs none, so sent only
    // where it does.
    if (op.body!.required?.length || op.body!.minProperties || op.body!.anyOf)
      add('empty, content-type JSON (where fields are needed)', '', [400, 422]);
    const base = baseBody(op, t);
    for (const prop of op.body!.required ?? []) {
      const { [prop]: _dropped, ...rest } = base;
      add('each required property missing', JSON.stringify(rest), [422]);
    }
    for (const [prop, schema] of Object.entries(propertiesOf(op.body))) {
      // Values ajv's type coercion cannot turn into the right type (it would make `123` a string, `null` an
      // empty one).
      add(
        'each property with the wrong type',
        withRaw(base, prop, isType(schema, 'object') ? '"x"' : '{}'),
        [422],
      );
      if (isType(schema, 'string')) {
        // Any 4xx: the request may be refused for its state (409) before the text reaches the database;
        // see storageCases.
        add('each string property: contains `\\u0000`', withRaw(base, prop, '"a\\u0000b"'), undefined);
        add(
          'each string property: lone surrogate `"\\ud800"`',
          withRaw(base, prop, '"a\\ud800b"'),
          undefined,
        );
        add(
          'each string property: lone low surrogate `"\\udc00"`',
          withRaw(base, prop, '"\\udc00"'),
          undefined,
        );
        add('each string property: 1 MiB long', withRaw(base, prop, JSON.stringify(MB)), [422]);
      }
      if (isType(schema, 'integer')) {
        for (const [name, raw] of [
          ['`1e400`', '1e400'],
          ['2^31', '2147483648'],
          ['2^63', '9223372036854775808'],
          ['`-1`', '-1'],
          ['`1.5`', '1.5'],
        ]) {
          // A property that takes negative numbers (a priority) is given -1 as a valid value.
          if (raw === '-1' && typeof schema.minimum === 'number' && schema.minimum < 0) continue;
          add(`each integer property: ${name}`, withRaw(base, prop, raw!), [422]);
        }
      }
    }
  }
  return cases;
}
