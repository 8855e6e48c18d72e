import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, screenshot } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';

// The API docs (Swagger UI at /docs) are public pages of the service's origin: they get the web UI's guards
// (a content security policy that forbids framing, nosniff), and still render under them.

/** The directives of a content-security-policy header, by name. */
function directives(header: string): Map<string, string[]> {
  const parsed = new Map<string, string[]>();
  for (const part of header.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) parsed.set(name.toLowerCase(), values);
  }
  return parsed;
}

describe('API docs at /docs', () => {
  let t: TestService;
  let browser: Browser;

  before(async () => {
    t = await startTestService({ listen: true });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('answers every docs page with a policy that forbids framing and inline script, and nosniff', async () => {
    for (const page of [
      '/docs/',
      '/docs/static/index.html',
      '/docs/static/swagger-initializer.js',
      '/docs/json',
    ]) {
      const res = await fetch(`${t.url}${page}`);
      await res.arrayBuffer();
      assert.equal(res.status, 200, page);
      const policy = res.headers.get('content-security-policy');
      assert.ok(policy, `${page} has a content-security-policy`);
      const csp = directives(policy);
      assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], `${page}: ${policy}`);
      assert.deepEqual(csp.get('default-src'), ["'none'"], `${page}: ${policy}`);
      assert.deepEqual(csp.get('object-src'), ["'none'"], `${page}: ${policy}`);
      const scripts = csp.get('script-src') ?? [];
      assert.ok(scripts.includes("'self'"), `${page}: ${policy}`);
      for (const unsafe of ["'unsafe-inline'", "'unsafe-eval'", 'https:', '*'])
        assert.ok(!scripts.includes(unsafe), `${page} allows ${unsafe} scripts`);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', page);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer', page);
    }
  });

  it('renders the operations in Chromium under that policy, with nothing refused', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/content security policy|refused to/i.test(m.text())) refused.push(m.text());
    });
    page.on('pageerror', (e) => refused.push(`page error: ${e.message}`));
    await page.goto(`${t.url}/docs/`);
    await page.getByRole('heading', { name: /Assay API/ }).waitFor();
    await page.locator('.opblock-summary-path', { hasText: '/experiments' }).first().waitFor();
    const operations = await page.locator('.opblock').count();
    assert.ok(operations > 20, `${operations} operations shown`);
    await screenshot(page, 'api-docs');
    assert.deepEqual(refused, []);
    await context.close();
  });
});
