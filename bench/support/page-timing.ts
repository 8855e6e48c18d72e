// Timings taken inside the page, against the navigation's start (performance.now()'s origin), so the
// DevTools protocol's round trips are not counted. The code goes to the page as text (the bench is compiled
// without the DOM's types), with each condition inlined as a function: the UI's CSP forbids eval.
import type { Browser, Page } from 'playwright-core';

// `__until(holds)`: resolves with performance.now() at the first frame after `holds()` is true.
const UNTIL = `
window.__until = (holds) => new Promise((resolve) => {
  let done = false;
  const check = () => {
    if (done || !holds()) return;
    done = true;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now())));
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  check();
});`;

export interface Loaded {
  page: Page;
  /** Navigation start → the first frame with `ready` true, in ms. */
  renderedMs: number;
  close(): Promise<void>;
}

/**
 * Opens `url` in a fresh context (a cold HTTP cache) signed in with `key` (the UI keeps it in
 * sessionStorage), and times it until `ready` holds.
 */
export async function openTimed(browser: Browser, url: string, key: string, ready: string): Promise<Loaded> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(`
    try { sessionStorage.setItem('assay.credential', ${JSON.stringify(key)}); } catch {}
    ${UNTIL}
    window.__rendered = document.location.protocol.startsWith('http') ? window.__until(() => (${ready})) : null;
  `);
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  const renderedMs = await page.evaluate<number>('window.__rendered');
  return { page, renderedMs, close: () => context.close() };
}

/**
 * Times one interaction: from the page's own `event` (change, click) to the first frame with `done` true.
 * Answers the duration and the end against the navigation's start.
 */
export async function timeAction(
  page: Page,
  event: 'change' | 'click',
  done: string,
  act: () => Promise<void>,
): Promise<{ ms: number; endMs: number }> {
  await page.evaluate(`window.__action = new Promise((resolve) =>
    document.addEventListener(${JSON.stringify(event)}, () => {
      const start = performance.now();
      window.__until(() => (${done})).then((end) => resolve({ ms: end - start, endMs: end }));
    }, { capture: true, once: true }));
    undefined;`); // not the promise itself, or evaluate would wait for it
  await act();
  return page.evaluate<{ ms: number; endMs: number }>('window.__action');
}

/** An expression: the number of elements `selector` matches, compared with `op n`. */
export const count = (selector: string, op: '===' | '>=', n: number) =>
  `document.querySelectorAll(${JSON.stringify(selector)}).length ${op} ${n}`;
