import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, screenshot } from '../support/browser.ts';
import { spawnCli, tempHome, waitFor } from '../support/cli.ts';
import { committedExperiment, createRun } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { newSession, signIn } from './support.ts';

// The measure of done: a real `assay run` prints, and the run's page in Chromium shows the line within
// 2 s. The program prints a line each time the test drops a file, so the time runs from the print itself.

const PROGRAM = `
import os, sys, time
print("\\x1b[1;32mready\\x1b[0m", flush=True)
for i in range(1, 4):
    while not os.path.exists(f"go-{i}"):
        time.sleep(0.02)
    print(f"printed {i} at {time.time():.3f}", flush=True)
    print(f"warning {i}", file=sys.stderr, flush=True)
`;

describe('a real assay run, watched live in Chromium and with assay runs logs --follow', () => {
  let t: TestService;
  let key: string;
  let home: string;
  let browser: Browser;

  before(async () => {
    t = await startTestService({ pglite: true, listen: true });
    key = (await t.createUser()).key;
    home = await tempHome();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('shows each line the program prints on the run page within 2 s', async () => {
    const experimentId = (await committedExperiment(t, key)).id;
    const { r } = await createRun(t, key, experimentId);
    await writeFile(path.join(home, 'program.py'), PROGRAM);
    const { result } = spawnCli(
      [
        'run',
        '--experiment',
        experimentId,
        '--variation',
        '1',
        '--run',
        String(r),
        '--',
        'python3',
        'program.py',
      ],
      { home, cwd: home, env: { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key } },
    );
    const dialogs: string[] = [];
    const { page } = await newSession(browser, dialogs);
    await signIn(page, t as never, key);
    await page.goto(`${t.url}/ui/experiments/${experimentId}/variations/1/runs/${r}`);
    const lines = page.locator('section.log-pane .log-lines');
    await lines.locator('.log-row', { hasText: 'ready' }).waitFor({ timeout: 30_000 });
    assert.equal(
      await lines.locator('.log-row', { hasText: 'ready' }).locator('.ansi-bold.ansi-fg-2').innerText(),
      'ready',
    );
    const delays: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const asked = Date.now();
      await writeFile(path.join(home, `go-${i}`), '');
      const row = lines.locator('.log-row', { hasText: `printed ${i} at` });
      await row.waitFor({ timeout: 10_000 });
      const printedAt = Number((await row.innerText()).split(' at ')[1]) * 1000;
      delays.push(Date.now() - Math.max(asked, printedAt));
      await lines.locator('.log-row[data-stream="stderr"]', { hasText: `warning ${i}` }).waitFor();
    }
    process.stdout.write(`# printed → shown in the browser: ${delays.join(', ')} ms\n`);
    assert.ok(
      delays.every((d) => d < 2_000),
      `each line within 2 s of its print: ${delays.join(', ')} ms`,
    );
    const { code, stderr } = await result;
    assert.equal(code, 0, stderr);
    await page.locator('section.log-pane .log-status', { hasText: 'complete' }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'run-log-assay-run');
    assert.deepEqual(dialogs, []);
  });

  it('assay runs logs --follow prints each line within 2 s of its print, and exits when the run is over', async () => {
    const experimentId = (await committedExperiment(t, key)).id;
    const { r } = await createRun(t, key, experimentId);
    const work = path.join(home, `follow-${r}`);
    await mkdir(work);
    await writeFile(path.join(work, 'program.py'), PROGRAM);
    const env = { SERVICE_SERVER_URL: t.url!, SERVICE_API_KEY: key };
    const run = spawnCli(
      [
        'run',
        '--experiment',
        experimentId,
        '--variation',
        '1',
        '--run',
        String(r),
        '--',
        'python3',
        'program.py',
      ],
      { home, cwd: work, env },
    );
    const follow = spawnCli(['runs', 'logs', experimentId, '1', String(r), '--follow'], { home, env });
    let out = '';
    follow.child.stdout!.on('data', (d: Buffer) => (out += d));
    await waitFor('the first line in the follow', () => (out.includes('ready') ? true : undefined), 30_000);
    const delays: number[] = [];
    for (let i = 1; i <= 3; i++) {
      const asked = Date.now();
      await writeFile(path.join(work, `go-${i}`), '');
      const line = await waitFor(
        `line ${i} in the follow`,
        () => out.split('\n').find((l) => l.startsWith(`printed ${i} at`)),
        10_000,
      );
      const printedAt = Number(line.split(' at ')[1]) * 1000;
      delays.push(Date.now() - Math.max(asked, printedAt));
    }
    process.stdout.write(`# printed → shown by assay runs logs --follow: ${delays.join(', ')} ms\n`);
    assert.ok(
      delays.every((d) => d < 2_000),
      `each line within 2 s of its print: ${delays.join(', ')} ms`,
    );
    assert.equal((await run.result).code, 0);
    const followed = await follow.result;
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stderr, /warning 3/);
  });
});
