import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenEnv, aliceToken } from '../support/admin-client.ts';
import { TestSystem } from '../support/system.ts';

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it), or CHROMIUM_PATH. */
const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path): path is string => Boolean(path && existsSync(path)));
if (!chromiumPath) {
  console.warn('[admin-console] SKIPPED: no Chromium at /usr/bin/chromium (or CHROMIUM_PATH); install it with `apt-get install -y --no-install-recommends chromium`');
}
const screenshotPath = 'test-results/admin-console.png';

describe.skipIf(!chromiumPath)('admin console page in headless Chromium', () => {
  let system: TestSystem;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    system = await TestSystem.start({ gatewayEnv: { ADMIN_TOKEN: adminTokenEnv } });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await system?.close();
  });

  it('signs in, shows a conversation as it appears, and suspends and resumes it with the buttons', async () => {
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${system.gateway.url}/admin/`);
    await page.locator('#sign-in-form').waitFor();
    await page.fill('#token', aliceToken);
    await page.click('#sign-in-form button[type=submit]');
    await page.waitForFunction("document.querySelector('#live')?.textContent === 'live'");
    expect(await page.textContent('#actor')).toContain('alice');

    // The list is already loaded; the new conversation can only arrive through the live event stream.
    await system.sendTelegram({ chatId: 9501, text: 'hello console' });
    const row = page.locator('tr[data-chat-id="9501"]');
    await row.waitFor({ timeout: 15_000 });
    await page.waitForFunction("document.querySelector('tr[data-chat-id=\"9501\"] [data-testid=activity]')?.textContent === 'last turn completed'");

    await row.click();
    await page.waitForFunction("document.querySelector('#transcript')?.textContent?.includes('echo: hello console')");
    expect(await page.textContent('#detail-status')).toBe('active');

    await page.click('button[data-action="suspend"]');
    await page.waitForFunction("document.querySelector('#detail-status')?.textContent === 'suspended (operator)'");
    await page.waitForFunction("document.querySelector('tr[data-chat-id=\"9501\"] [data-testid=status]')?.textContent === 'suspended'");
    const [suspended] = await system.sql<{ status: string }[]>`select status from conversations where chat_id = '9501'`;
    expect(suspended?.status).toBe('suspended');

    await page.click('button[data-action="resume"]');
    await page.waitForFunction("document.querySelector('#detail-status')?.textContent === 'active'");
    const [resumed] = await system.sql<{ status: string; current_session_id: string | null }[]>`select status, current_session_id from conversations where chat_id = '9501'`;
    expect(resumed).toMatchObject({ status: 'active' });
    expect(resumed?.current_session_id).not.toBeNull();
    await page.waitForFunction("document.querySelector('#event-log')?.textContent?.includes('conversation.resumed')");

    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: screenshotPath, fullPage: true });
    expect(existsSync(screenshotPath)).toBe(true);
    expect(errors).toEqual([]);
  });

  it('opens the API docs and bull-board on the same browser session', async () => {
    await page.goto(`${system.gateway.url}/admin/docs/`);
    await page.waitForFunction("document.body.innerText.includes('Switchboard admin API') && document.body.innerText.includes('/admin/conversations')", undefined, { timeout: 15_000 });
    await page.goto(`${system.gateway.url}/admin/queues`);
    await page.waitForFunction("document.body.innerText.toLowerCase().includes('turns')", undefined, { timeout: 15_000 });
  });
});
