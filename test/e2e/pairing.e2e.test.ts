import { execFile } from 'node:child_process';
import { repoRoot } from '@switchboard/harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, adminTokenEnv } from '../support/admin-client.ts';
import { discordSent, sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { TestSystem } from '../support/system.ts';

// Issue 22, item 6: DM_POLICY=pairing as the unknown user and the operator see it, on all three platforms.
const codePattern = /pairing code ([A-HJKMNP-Z2-9]{8}) /;
const approvedLine = 'You are approved: you can talk to me now.';

interface PairingRow {
  code: string;
  platform: string;
  userId: string;
}

/** `npm run pair -- <args>` as an operator types it: a real npm subprocess against the running gateway. */
function runPair(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '-s', 'pair', '--', ...args],
      { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('pairing: unknown DM users get a code, an operator approves it', () => {
  let system: TestSystem;
  let base: string;

  beforeAll(async () => {
    system = await TestSystem.start({ slack: true, discord: true, gatewayEnv: { DM_POLICY: 'pairing', ADMIN_TOKEN: adminTokenEnv } });
    base = system.gateway.url;
    await waitForDiscordGateway(system.simUrl, { identifies: 1, connected: true });
  });
  afterAll(async () => {
    await system?.close();
  });

  const pending = async () => (await adminRequest<{ items: PairingRow[] }>(base, 'GET', '/admin/pairings')).body.items;
  const paired = async () => (await adminRequest<{ items: { platform: string; userId: string; approvedBy: string }[] }>(base, 'GET', '/admin/paired-users')).body.items;
  const approve = (code: string) => adminRequest<Record<string, unknown>>(base, 'POST', `/admin/pairings/${code}/approve`);
  const modelSaw = async (text: string) => {
    const requests = (await (await fetch(`${system.simUrl}/control/model/requests`)).json()) as { body: unknown }[];
    return requests.some((request) => JSON.stringify(request.body).includes(text));
  };
  const storedFrom = async (platform: string, chatId: string) => {
    const [row] = await system.sql<{ n: number }[]>`
      select count(*)::int as n from inbound_events e join conversations c on c.id = e.conversation_id where c.platform = ${platform} and c.chat_id = ${chatId}`;
    return row?.n ?? 0;
  };
  const telegramSent = async (chatId: number) => (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=${chatId}`)).json()) as { text: string }[];
  const codeIn = (text: string | undefined) => codePattern.exec(text ?? '')?.[1] ?? '';

  it('Telegram: a code and no model; asking again gets the same code, not a new one; approved → told, and the next DM reaches the model; revoked → unknown again', async () => {
    await system.sendTelegram({ chatId: 901, text: 'secret plan one' });
    const [first] = await system.waitForTelegram(901, 1);
    const code = codeIn(first?.text);
    expect(code).toHaveLength(8);
    for (const text of ['secret plan two', 'secret plan three']) await system.sendTelegram({ chatId: 901, text });
    expect((await pending()).filter((p) => p.userId === '901')).toEqual([expect.objectContaining({ code, platform: 'telegram' })]);
    expect(await telegramSent(901)).toHaveLength(1);
    expect(await storedFrom('telegram', '901')).toBe(0);
    expect(await modelSaw('secret plan')).toBe(false);

    // Ten minutes on, a message is answered with the same code again.
    await system.sql`update pairings set last_told_at = now() - interval '11 minutes' where code = ${code}`;
    await system.sendTelegram({ chatId: 901, text: 'secret plan four' });
    expect(codeIn((await system.waitForTelegram(901, 2))[1]?.text)).toBe(code);

    const approved = await approve(code);
    expect(approved).toMatchObject({ status: 200, body: { ok: true, platform: 'telegram', userId: '901' } });
    expect((await system.waitForTelegram(901, 3))[2]?.text).toBe(approvedLine);
    expect(await paired()).toContainEqual(expect.objectContaining({ platform: 'telegram', userId: '901', approvedBy: 'alice' }));
    await system.sendTelegram({ chatId: 901, text: 'now I am in' });
    expect((await system.waitForTelegram(901, 4))[3]?.text).toBe('echo: now I am in');

    expect((await adminRequest(base, 'DELETE', '/admin/paired-users/telegram/901')).status).toBe(200);
    await system.sendTelegram({ chatId: 901, text: 'am I still in?' });
    const again = codeIn((await system.waitForTelegram(901, 5))[4]?.text);
    expect(again).toHaveLength(8);
    expect(again).not.toBe(code);
    expect(await modelSaw('am I still in?')).toBe(false);

    const audit = (await adminRequest<{ items: { action: string; result: string; actor: string }[] }>(base, 'GET', '/admin/audit?limit=50')).body.items;
    expect(audit.filter((a) => a.action.startsWith('pairing.')).map((a) => [a.action, a.result, a.actor])).toEqual([
      ['pairing.revoke', 'ok', 'alice'],
      ['pairing.approve', 'ok', 'alice'],
    ]);
  });

  it('refuses a bad code with 404 PAIRING_NOT_FOUND and changes nothing', async () => {
    const before = { pending: await pending(), paired: await paired() };
    for (const bad of ['ZZZZ2222', 'not-a-code!', 'a'.repeat(64)]) {
      const answer = await approve(encodeURIComponent(bad));
      expect(answer.status, bad).toBe(404);
      expect(answer.body, bad).toMatchObject({ ok: false, error: 'PAIRING_NOT_FOUND' });
    }
    expect(await adminRequest(base, 'DELETE', '/admin/paired-users/telegram/nobody')).toMatchObject({ status: 404, body: { error: 'PAIRED_USER_NOT_FOUND' } });
    expect({ pending: await pending(), paired: await paired() }).toEqual(before);
  });

  it('Slack: approved with `npm run pair -- approve <code>` in a real subprocess; the user is told and the next DM reaches the model', async () => {
    await system.sendSlack({ channel: 'D901', user: 'U901', channel_type: 'im', text: 'hello from slack' });
    const code = codeIn((await system.waitForSlack('D901', 1))[0]?.text);
    expect(code).toHaveLength(8);
    expect(await modelSaw('hello from slack')).toBe(false);

    const env = { GATEWAY_URL: base, ADMIN_TOKEN: adminTokenEnv };
    const wrong = await runPair(['approve', 'ZZZZ2222'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/pair failed: .*PAIRING_NOT_FOUND/);
    const run = await runPair(['approve', code.toLowerCase()], env);
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining('Approved: slack user U901') });

    expect((await system.waitForSlack('D901', 2))[1]?.text).toBe(approvedLine);
    await system.sendSlack({ channel: 'D901', user: 'U901', channel_type: 'im', text: 'slack again' });
    expect((await system.waitForSlack('D901', 3))[2]?.text).toBe('echo: slack again');
    expect((await runPair(['list'], env)).stdout).toMatch(/slack user U901, approved by alice/);
  });

  it('Discord: a DM gets a code, approval tells the user, the next DM reaches the model', async () => {
    const channelId = '5000000000000009001';
    await sendDiscordMessage(system.simUrl, { channelId, authorId: '7000000000000009001', content: 'hello from discord' });
    const code = codeIn((await waitForDiscordMessages(system.simUrl, channelId, 1))[0]?.content);
    expect(code).toHaveLength(8);
    expect(await modelSaw('hello from discord')).toBe(false);
    expect((await approve(code)).status).toBe(200);
    expect((await waitForDiscordMessages(system.simUrl, channelId, 2))[1]?.content).toBe(approvedLine);
    await sendDiscordMessage(system.simUrl, { channelId, authorId: '7000000000000009001', content: 'discord again' });
    expect((await waitForDiscordMessages(system.simUrl, channelId, 3))[2]?.content).toBe('echo: discord again');
    expect(await discordSent(system.simUrl, channelId)).toHaveLength(3);
  });

  it('an expired code cannot be approved (410 PAIRING_EXPIRED) and the user stays unknown', async () => {
    await system.sendTelegram({ chatId: 902, text: 'let me in' });
    const code = codeIn((await system.waitForTelegram(902, 1))[0]?.text);
    // An hour passes.
    await system.sql`update pairings set expires_at = now() - interval '1 second' where code = ${code}`;
    expect(await approve(code)).toMatchObject({ status: 410, body: { ok: false, error: 'PAIRING_EXPIRED' } });
    expect((await paired()).some((p) => p.userId === '902')).toBe(false);
    expect((await pending()).some((p) => p.code === code)).toBe(false);
    await system.sendTelegram({ chatId: 902, text: 'still me' });
    const [, second] = await system.waitForTelegram(902, 2);
    expect(codeIn(second?.text)).not.toBe(code);
    expect(await storedFrom('telegram', '902')).toBe(0);
  });

  it('squatters cannot block newcomers: a 4th unknown user evicts the oldest code; a denied user gets no code for a day (issue 30, finding 7)', async () => {
    // 901 (revoked, asked again) and 902 hold two of Telegram's three slots.
    expect((await pending()).filter((p) => p.platform === 'telegram')).toHaveLength(2);
    await system.sendTelegram({ chatId: 903, text: 'third' });
    const code903 = codeIn((await system.waitForTelegram(903, 1))[0]?.text);
    expect(code903).toHaveLength(8);
    const [oldest] = (await pending()).filter((p) => p.platform === 'telegram');

    // Before, the 4th was told "cannot take new pairing requests" for as long as three accounts kept asking.
    await system.sendTelegram({ chatId: 904, text: 'fourth' });
    const code904 = codeIn((await system.waitForTelegram(904, 1))[0]?.text);
    expect(code904).toHaveLength(8);
    const telegramPending = (await pending()).filter((p) => p.platform === 'telegram');
    expect(telegramPending.map((p) => p.userId)).not.toContain(oldest?.userId);
    expect(telegramPending).toHaveLength(3);
    expect(await approve(oldest!.code)).toMatchObject({ status: 410, body: { ok: false, error: 'PAIRING_EXPIRED' } });

    // The operator denies 904 from a shell: the slot is free, the code dead, and 904 is refused instead of re-coded.
    const denied = await runPair(['deny', code904.toLowerCase()], { GATEWAY_URL: base, ADMIN_TOKEN: adminTokenEnv });
    expect(denied).toMatchObject({ code: 0, stdout: expect.stringContaining('Denied: telegram user 904') });
    expect((await pending()).some((p) => p.userId === '904')).toBe(false);
    expect(await approve(code904)).toMatchObject({ status: 404, body: { ok: false, error: 'PAIRING_NOT_FOUND' } });
    await system.sendTelegram({ chatId: 904, text: 'fourth, again' });
    expect((await system.waitForTelegram(904, 2))[1]?.text).toMatch(/not available to you/);
    await system.sendTelegram({ chatId: 904, text: 'fourth, once more' });
    expect((await pending()).some((p) => p.userId === '904')).toBe(false);
    expect(await modelSaw('fourth')).toBe(false);
    expect((await adminRequest(base, 'POST', '/admin/pairings/ABCD2345/deny')).status).toBe(404);
  });

  it('offers no code in a group chat, and a stranger\'s group is closed: GROUP_POLICY unset follows DM_POLICY=pairing (allowlist), so no turn', async () => {
    // Issue 30, finding 6: before, GROUP_POLICY defaulted to open, so a stranger who created a group and added the bot had full access.
    await system.sendTelegram({ chatId: -905, fromId: 905, chatType: 'supergroup', text: '@switchboard_sim_bot hi from a group' });
    expect((await system.waitForTelegram(-905, 1))[0]?.text).toMatch(/not available to you/);
    expect(await modelSaw('hi from a group')).toBe(false);
    expect(await storedFrom('telegram', '-905')).toBe(0);
    expect((await pending()).some((p) => p.userId === '905')).toBe(false);
  });
});
