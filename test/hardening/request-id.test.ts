import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startLoggedService, type LoggedService } from '../support/logged-service.ts';
import { SecretRegistry } from '../support/secret-scan.ts';

// A caller's x-request-id is logged with every line of its request and echoed back. A client that puts a key
// (or its secret part, or an access token) there by mistake must not find it in the service's log.

/** Random base64url without `_`, the one character of it a plain-id pattern would refuse on its own. */
function base64urlWithoutUnderscore(bytes: number): string {
  for (;;) {
    const value = randomBytes(bytes).toString('base64url');
    if (!value.includes('_')) return value;
  }
}

const segment = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** A JWT-shaped token with no `_` in it. */
function jwtLike(): string {
  for (;;) {
    const token = `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment({ sub: randomUUID(), exp: Date.now() })}.${base64urlWithoutUnderscore(64)}`;
    if (!token.includes('_')) return token;
  }
}

describe('x-request-id that looks like a credential', () => {
  let svc: LoggedService;
  let userKey: string;

  /** GET /v1/me with the given x-request-id; answers the status and the x-request-id the service echoed. */
  async function meWithRequestId(requestId: string) {
    const res = await fetch(`${svc.url}/v1/me`, {
      headers: { authorization: `Bearer ${userKey}`, 'x-request-id': requestId },
    });
    await res.arrayBuffer();
    return { status: res.status, echoed: res.headers.get('x-request-id') };
  }

  before(async () => {
    svc = await startLoggedService({ level: 'info' });
    const created = await svc.request('POST', '/admin/users', {
      key: svc.adminKey,
      body: { email: `rid.${process.pid}@example.test` },
    });
    assert.equal(created.status, 201, created.text);
    userKey = created.body.api_key.key;
  });
  after(() => svc.close());

  it('keeps an ordinary id: a UUID, a trace id, a short name', async () => {
    for (const id of [
      randomUUID(),
      `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
      'req-42',
    ]) {
      const { status, echoed } = await meWithRequestId(id);
      assert.equal(status, 200);
      assert.equal(echoed, id);
      assert.ok(
        svc.logs.some((line) => line.includes(id)),
        `${id} is in the log`,
      );
    }
  });

  it('neither logs nor echoes a key, a key’s secret part, an access token or a long hex secret', async () => {
    const secrets = new SecretRegistry();
    const secretPart = base64urlWithoutUnderscore(32);
    const sent = [
      secretPart,
      `sk-user-${randomUUID().replaceAll('-', '')}${secretPart}`,
      jwtLike(),
      randomBytes(32).toString('hex'),
      `${randomUUID().replaceAll('-', '')}${secretPart}`,
    ];
    const answers = [];
    for (const value of sent) {
      assert.doesNotMatch(value, /_/);
      secrets.add(value, `a credential sent as x-request-id (${value.slice(0, 6)}…)`);
      answers.push({ value, ...(await meWithRequestId(value)) });
    }
    assert.deepEqual(secrets.scan(svc.logs, 'service log'), []);
    for (const { value, status, echoed } of answers) {
      assert.equal(status, 200);
      assert.notEqual(echoed, value, 'a fresh id is answered instead');
      assert.match(echoed ?? '', /^[0-9a-f-]{36}$/);
    }
  });
});
