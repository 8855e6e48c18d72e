import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/service.ts';

// The web UI as the service serves it, over a real port: where it lives, what each response may do in a
// browser (the Content-Security-Policy), how it is cached, and that no API path is shadowed by it.

function directives(policy: string | null): Map<string, string[]> {
  assert.ok(policy, 'a Content-Security-Policy header');
  return new Map(
    policy.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values];
    }),
  );
}

async function get(url: string, init?: RequestInit) {
  return fetch(url, { redirect: 'manual', ...init });
}

for (const storage of ['local', 's3'] as const) {
  describe(`web UI responses (${storage} storage)`, () => {
    let t: TestService;
    before(async () => {
      t = await startTestService({ pglite: true, listen: true, storage });
    });
    after(() => t.close());

    it('answers / with a redirect to /ui/, and every /ui/ route with the same index page, revalidated', async () => {
      const root = await get(`${t.url}/`);
      assert.equal(root.status, 302);
      assert.equal(root.headers.get('location'), '/ui/');
      const pages = await Promise.all(
        ['/ui/', '/ui/experiments/x/variations/1/runs/2'].map((p) => get(t.url + p)),
      );
      const [index, deep] = await Promise.all(pages.map((r) => r.text()));
      for (const page of pages) {
        assert.equal(page.status, 200);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
        assert.equal(page.headers.get('cache-control'), 'no-cache');
      }
      assert.equal(deep, index);
      // No inline script: every <script> loads a file (the policy would refuse anything else anyway).
      const scripts = [...index!.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      assert.ok(scripts.length > 0);
      for (const [, attributes, body] of scripts) {
        assert.match(attributes!, /\ssrc="\/ui\/assets\//);
        assert.equal(body!.trim(), '');
      }
    });

    it('sends a strict policy and nosniff on the page and its assets; hashed assets are cached for good', async () => {
      const index = await (await get(`${t.url}/ui/`)).text();
      const assets = [...index.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), index);
      const uploadOrigin = await presignedUploadOrigin(t);
      for (const url of ['/ui/', '/ui/experiments', ...assets]) {
        const res = await get(t.url + url);
        assert.equal(res.status, 200, url);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', url);
        const csp = directives(res.headers.get('content-security-policy'));
        assert.deepEqual(csp.get('default-src'), ["'none'"]);
        assert.deepEqual(csp.get('script-src'), ["'self'"]);
        assert.deepEqual(csp.get('style-src'), ["'self'"]);
        assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
        assert.deepEqual(csp.get('object-src'), ["'none'"]);
        assert.deepEqual(csp.get('base-uri'), ["'none'"]);
        // The browser uploads straight to storage on presigned URLs: that origin, and no other,
        // besides 'self'.
        const connect = csp.get('connect-src') ?? [];
        assert.equal(connect[0], "'self'");
        assert.ok(connect.includes(uploadOrigin), `${connect.join(' ')} lacks ${uploadOrigin}`);
        assert.ok(
          connect.every((s) => s === "'self'" || URL.canParse(s)),
          connect.join(' '),
        );
        if (url.startsWith('/ui/assets/')) {
          assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
          assert.match(url, /-[A-Za-z0-9_-]{8}\.(js|css)$/, 'asset names carry their content hash');
        }
      }
    });

    it('leaves API paths to the API: JSON errors, never the index page', async () => {
      const cases: Array<[string, number, string]> = [
        ['/experiments/00000000-0000-4000-8000-000000000000', 401, 'unauthenticated'],
        ['/assets', 401, 'unauthenticated'],
        ['/no-such-route', 404, 'route_not_found'],
        ['/ui/assets/missing-00000000.js', 404, 'route_not_found'],
      ];
      for (const [url, status, code] of cases) {
        const res = await get(t.url + url);
        assert.equal(res.status, status, url);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/, url);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, code, url);
      }
      const traversal = await get(`${t.url}/ui/assets/..%2f..%2f..%2fpackage.json`);
      assert.ok(traversal.status >= 400 && traversal.status < 500, String(traversal.status));
      assert.doesNotMatch(await traversal.text(), /"workspaces"/);
    });
  });
}

/** The origin of a presigned upload URL the service hands out for a new asset. */
async function presignedUploadOrigin(t: TestService): Promise<string> {
  const created = await t.as(t.adminKey).post('/assets', {
    presign: true,
    kind: 'report',
    name: 'csp probe',
    organization_id: 'personal',
    components: [{ name: 'file', size: 1, content_type: 'text/plain' }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return new URL(created.body.uploads.file.url).origin;
}
