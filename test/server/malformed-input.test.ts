import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { generateOrchestratorKey } from '../../src/server/orchestration/orchestrator-keys.ts';
import { FakeOrchestrator } from '../support/fake-orchestrator.ts';
import { addVariation, committedExperiment, createExperiment, createRun } from '../support/fixtures.ts';
import { bodyCases } from '../support/malformed/body-cases.ts';
import { operationsOf, type Case, type Operation, type Targets } from '../support/malformed/operations.ts';
import { headerCases, methodCases, pathCases, queryCases } from '../support/malformed/request-cases.ts';
import { nestingCases, storageCases, yamlCases } from '../support/malformed/stored-text-cases.ts';
import { startTestService, type Reply, type TestService } from '../support/service.ts';

// "No endpoint answers 500 to any malformed input": every operation /openapi.json lists, against real
// PostgreSQL. WRITE_MALFORMED_DOC=1 rewrites docs/malformed-inputs.md from the answers this run got.

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const GROUPS: {
  id: string;
  title: string;
  about: string;
  build: (ops: Operation[], t: Targets) => Case[];
}[] = [
  {
    id: 'path',
    title: 'Path parameters',
    about:
      'Each path parameter of every operation in turn; the other parameters name real objects, and non-GET requests carry a body with an unknown property, so nothing can be written. A 2xx is allowed only for a GET given a spelling the schema coerces to the real value (upper-case UUID, `0x1`, `1e0`, `01`).',
    build: pathCases,
  },
  {
    id: 'query',
    title: 'Query strings',
    about:
      'Every query parameter each operation declares, then query strings sent to every operation. A 2xx is allowed on a GET: a valid value such as `q=abc`, or parameters a route without a query schema ignores.',
    build: queryCases,
  },
  {
    id: 'body',
    title: 'Request bodies',
    about:
      'Every operation with a JSON body, at real objects. Per-property cases start from a valid body and break one property; a wrong type is `{}` (or `"x"` for an object), values the schema cannot coerce. An empty body means "no fields", a valid call where none are required, so it is sent only where some are.',
    build: bodyCases,
  },
  {
    id: 'storage',
    title: 'Text PostgreSQL cannot store',
    about:
      'Bodies that pass the schema but hold text PostgreSQL refuses (NUL, in text and jsonb) or UTF-8 cannot encode (lone surrogates). Each must answer 400 `invalid_value` and store nothing. In the search `q` a surrogate can only arrive as its CESU-8 bytes (`%ED%A0%80`), which decode to no surrogate at all: a search for odd text.',
    build: (_, t) => storageCases(t),
  },
  {
    id: 'nesting',
    title: 'Deep JSON in a free-form object',
    about:
      'A run environment (any JSON object) the parser accepts but that cannot be serialised for the database.',
    build: (_, t) => nestingCases(t),
  },
  {
    id: 'yaml',
    title: 'config_yaml',
    about:
      'Sent to create and to edit a variation of a draft experiment, where valid YAML would be stored, and as a sweep’s `base_yaml`. Syntax errors name `details.line` and `details.column`.',
    build: (_, t) => yamlCases(t),
  },
  {
    id: 'headers',
    title: 'Credentials and headers',
    about: 'Sent to every operation; the two health routes are public.',
    build: headerCases,
  },
  { id: 'methods', title: 'Methods', about: 'Sent to every path.', build: methodCases },
];

interface Outcome {
  /** Position in the battery, so the doc's order does not depend on which concurrent answer came first. */
  index: number;
  group: string;
  name: string;
  column: string | undefined;
  op: string;
  answer: string;
}

describe('malformed input never gets a 5xx', () => {
  let t: TestService;
  let ops: Operation[];
  let targets: Targets;
  let before_: Record<string, unknown>;
  // The /orchestrator/* operations are called with the orchestrator's key (the admin's lacks their scope).
  const orchestratorKey = generateOrchestratorKey();
  const outcomes: Outcome[] = [];

  /** Everything the battery must leave as it was, read through the API. */
  async function snapshot(): Promise<Record<string, unknown>> {
    const api = t.as(t.adminKey);
    const items = async (url: string) => {
      const res = await api.get(url);
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
      return res.body.items as Record<string, unknown>[];
    };
    const experiment = await api.get(`/experiments/${targets.experimentId}`);
    const draft = await api.get(`/experiments/${targets.draftId}`);
    const run = await api.get(`/experiments/${targets.experimentId}/variations/1/runs/1`);
    const variation = await api.get(`/experiments/${targets.draftId}/variations/1`);
    const me = await api.get('/v1/me');
    return {
      experiments:
        (await items('/experiments?limit=200')).length +
        (await items(`/experiments?limit=200&organization_id=${targets.organizationId}`)).length,
      variations:
        (await items(`/experiments/${targets.experimentId}/variations`)).length +
        (await items(`/experiments/${targets.draftId}/variations`)).length,
      runs: (await items(`/experiments/${targets.experimentId}/variations/1/runs`)).length,
      organizations: (await api.get('/v1/me/scopes')).body.organizations.length,
      members: (await items(`/organizations/${targets.organizationId}/members`)).length,
      apiKeys: (await items('/api-keys')).length,
      assets: ops.some((o) => o.label === 'GET /assets')
        ? (await items('/assets?limit=200')).length
        : 'no route',
      experimentState: experiment.body.state,
      draft: [draft.body.name, draft.body.description, draft.body.hypothesis],
      draftVariation: [variation.body.name, variation.body.config_yaml],
      runState: [run.body.state, run.body.environment],
      defaultOrganization: me.body.default_organization_id,
    };
  }

  before(async () => {
    t = await startTestService({
      orchestrator: new FakeOrchestrator(),
      env: { ASSAY_ORCHESTRATOR_KEY: orchestratorKey },
    });
    const key = t.adminKey;
    const experiment = await committedExperiment(t, key);
    const run = await createRun(t, key, experiment.id);
    assert.equal((await t.as(key).get(`${run.path}/config`)).status, 200); // so a valid start would proceed to the UPDATE
    const draft = await createExperiment(t, key, { name: 'draft' });
    await addVariation(t, key, draft.id);
    const org = await t.as(key).post('/organizations', { slug: 'malformed-org', name: 'Malformed' });
    assert.equal(org.status, 201, JSON.stringify(org.body));
    const other = await t.createUser();
    targets = {
      experimentId: experiment.id,
      draftId: draft.id,
      organizationId: org.body.id,
      otherUserId: other.id,
    };
    const openapi = await t.request('GET', '/openapi.json');
    assert.equal(openapi.status, 200);
    ops = operationsOf(openapi.body);
    before_ = await snapshot();
  });

  after(async () => {
    await t?.close();
    if (process.env.WRITE_MALFORMED_DOC === '1')
      await writeFile(new URL('../../docs/malformed-inputs.md', import.meta.url), renderDoc(ops, outcomes));
  });

  it('covers every operation the OpenAPI document lists', () => {
    assert.ok(ops.length >= 30, `only ${ops.length} operations`);
    for (const op of ops.filter((o) => o.body)) assert.ok(bodyCases([op], targets).length > 0, op.label);
  });

  for (const group of GROUPS) {
    it(`${group.title}: no 5xx, the documented error body, a request id`, async () => {
      const failures: string[] = [];
      const cases = group.build(ops, targets);
      const offset = outcomes.length;
      await inBatches(cases, 8, async (c, i) => {
        const res = await send(t, c, orchestratorKey);
        outcomes.push({
          index: offset + i,
          group: c.group,
          name: c.name,
          column: c.column,
          op: c.op,
          answer: answerOf(res),
        });
        const problems = problemsOf(c, res);
        if (problems.length > 0)
          failures.push(`${c.name} | ${c.method} ${c.url.slice(0, 120)}: ${problems.join('; ')}`);
      });
      assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed`);
    });
  }

  it('wrote nothing: counts and the target objects are unchanged', async () => {
    assert.deepEqual(await snapshot(), before_);
  });
});

// The exchange route takes a managed instance's single-use token, not a key: a well-formed one that names no
// exchange gets through to the body checks. Assembled, so no committed line looks like a real token.
const UNKNOWN_EXCHANGE_TOKEN = ['sk', 'exchange', '0'.repeat(32) + 'A'.repeat(43)].join('_');

function send(t: TestService, c: Case, orchestratorKey: string): Promise<Reply> {
  const headers = { ...c.headers };
  if (c.authorization === undefined)
    headers.authorization = `Bearer ${
      c.url.startsWith('/orchestrator/')
        ? orchestratorKey
        : c.url.startsWith('/worker-keys/exchange')
          ? UNKNOWN_EXCHANGE_TOKEN
          : t.adminKey
    }`;
  else if (c.authorization !== null) headers.authorization = c.authorization;
  return t.request(c.method, c.url, { rawBody: c.rawBody, headers });
}

function answerOf(res: Reply): string {
  const code = res.body?.error?.code;
  return typeof code === 'string' ? `${res.status} ${code}` : String(res.status);
}

function problemsOf(c: Case, res: Reply): string[] {
  const problems: string[] = [];
  const requestId = res.headers['x-request-id'];
  if (res.status >= 500) problems.push(`answered ${res.status} ${JSON.stringify(res.body)}`);
  if (typeof requestId !== 'string' || !SAFE_ID.test(requestId))
    problems.push(`x-request-id header is ${JSON.stringify(requestId)}`);
  if (c.expect.requestIdReplaced && requestId === c.headers?.['x-request-id'])
    problems.push('echoed an unsafe x-request-id');
  if (c.expect.redirect !== undefined) {
    if (res.status !== 302 || res.headers.location !== c.expect.redirect)
      problems.push(`status ${res.status}, expected a redirect to ${c.expect.redirect}`);
    return problems;
  }
  if (res.status >= 200 && res.status < 300) {
    if (!c.expect.allow2xx) problems.push(`accepted with ${res.status}`);
    return problems;
  }
  const error = res.body?.error;
  if (!(typeof error?.code === 'string' && SNAKE.test(error.code) && typeof error.message === 'string')) {
    problems.push(`body is not {"error": {code, message}}: ${JSON.stringify(res.body)?.slice(0, 200)}`);
  }
  const statusOk = c.expect.status
    ? c.expect.status.includes(res.status)
    : res.status >= 400 && res.status < 500;
  if (!statusOk)
    problems.push(
      `status ${res.status} (${error?.code}), expected ${c.expect.status?.join(' or ') ?? '4xx'}`,
    );
  if (c.expect.code && !c.expect.code.includes(error?.code))
    problems.push(`code ${error?.code}, expected ${c.expect.code.join(' or ')}`);
  if (
    c.expect.lineColumn &&
    !(Number.isInteger(error?.details?.line) && Number.isInteger(error?.details?.column))
  ) {
    problems.push(`no details.line/column: ${JSON.stringify(error)}`);
  }
  return problems;
}

async function inBatches<T>(
  items: T[],
  size: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size)
    await Promise.all(items.slice(i, i + size).map((item, j) => fn(item, i + j)));
}

function renderDoc(ops: Operation[], outcomes: Outcome[]): string {
  const lines = [
    '# Malformed inputs: what was tried, and what each got',
    '',
    '<!-- Generated: WRITE_MALFORMED_DOC=1 node --test test/server/malformed-input.test.ts (edit the battery, not this file). -->',
    '',
    `${outcomes.length} requests against the ${ops.length} operations \`/openapi.json\` lists, on a fresh PostgreSQL database, with a valid admin key`,
    '(the orchestrator key for `/orchestrator/*`, whose run ids name no run) and an orchestrator that answers every call,',
    'and real objects: a committed experiment with a variation and a run (config read, still pending), a draft experiment with a variation,',
    'an organization. The test asserts that no answer is 5xx; that every non-2xx answer has the body',
    '`{"error": {"code": "<snake_case>", "message": …, "details"?}}` and every answer an `x-request-id` header; and that afterwards',
    'the numbers of experiments, variations, runs, organizations, members, API keys and assets, and the target objects themselves, are unchanged.',
    '"Answers" gives status, error code and, where several requests were sent, (how many got it).',
  ];
  const summary = (list: Outcome[]) => {
    const counts = new Map<string, number>();
    for (const o of list) counts.set(o.answer, (counts.get(o.answer) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([answer, n]) => (list.length === 1 ? answer : `${answer} (${n})`))
      .join(' · ');
  };
  const groupBy = (list: Outcome[], key: (o: Outcome) => string) => {
    const map = new Map<string, Outcome[]>();
    for (const o of list) map.set(key(o), [...(map.get(key(o)) ?? []), o]);
    return map;
  };
  const opOf = (o: Outcome) =>
    `\`${o.op.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}').replace(/\?.*$/, '')}\``;
  for (const group of GROUPS) {
    const mine = outcomes.filter((o) => o.group === group.id).sort((a, b) => a.index - b.index);
    if (mine.length === 0) continue;
    lines.push('', `## ${group.title}`, '', group.about, '');
    const columns = [...groupBy(mine, (o) => o.column ?? '').keys()];
    if (columns.length > 1) {
      lines.push(
        `| Field | Sent to | ${columns.join(' | ')} |`,
        `|---|---|${columns.map(() => '---|').join('')}`,
      );
      for (const [name, list] of groupBy(mine, (o) => o.name)) {
        lines.push(
          `| ${name} | ${opOf(list[0]!)} | ${columns.map((c) => summary(list.filter((o) => o.column === c))).join(' | ')} |`,
        );
      }
      continue;
    }
    lines.push('| Sent | Requests | Answers |', '|---|---|---|');
    for (const [name, list] of groupBy(mine, (o) => o.name)) {
      const where = new Set(list.map((o) => o.op)).size === 1 ? ` — ${opOf(list[0]!)}` : '';
      lines.push(`| ${name}${where} | ${list.length} | ${summary(list)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
