import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { AssayServer } from '../support/assay-server.ts';

// What the browser tests of the web UI share: sessions that record dialogs, sign-in, and API setup calls.

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A fresh browser context and page; every dialog it opens is recorded (and dismissed) in `dialogs`. */
export async function newSession(browser: Browser, dialogs: string[], viewport = DESKTOP) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { context, page };
}

/** Signs in on the sign-in page with a key, and waits for the experiments list. */
export async function signIn(page: Page, server: Pick<AssayServer, 'url'>, key: string): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByLabel('API key or access token').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Experiments', exact: true }).waitFor();
}

/** One API call for a test's setup or check, through the service's HTTP surface; answers status and body. */
export async function api(
  server: AssayServer,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** A user created by the admin API, with their first key. */
export async function createUser(server: AssayServer, adminKey: string, email: string) {
  const created = await api(server, adminKey, 'POST', '/admin/users', { email });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { user, api_key } = created.body as { user: { id: string }; api_key: { id: string; key: string } };
  return { id: user.id, email, key: api_key.key, keyId: api_key.id };
}
