import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaNotices } from '@switchboard/core';
import { sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { slackBotToken } from '../support/slack.ts';
import { postJson, TestSystem } from '../support/system.ts';

/**
 * Issue 30, finding 2: a chat user shares a file whose URL points at a host
 * of their choosing. Before, the worker fetched it with `Authorization:
 * Bearer <SLACK_BOT_TOKEN>` (a Slack remote file's url_private is its
 * sharer's link), and followed redirects anywhere. Now only the platform's
 * own file hosts are fetched (here: the simulator, the configured API's
 * origin), the token only goes to Slack's, and every redirect hop is checked.
 * The "attacker" is a loopback HTTP server on another port that records
 * every request it gets.
 */
describe('a user\'s file is fetched only from the platform\'s own file hosts', () => {
  let system: TestSystem;
  let sim: string;
  let attacker: Server;
  let attackerUrl: string;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    attacker = createServer((request, response) => {
      seen.push({ url: request.url ?? '', headers: request.headers });
      response.writeHead(200, { 'content-type': 'image/png' }).end(randomBytes(64));
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    system = await TestSystem.start({ slack: true, discord: true, workerEnv: { BUSY_INPUT_MODE: 'queue' } });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
  });
  afterAll(async () => {
    await system?.close();
    await new Promise((resolve) => attacker?.close(resolve));
  });

  async function upload(fields: Record<string, unknown>): Promise<string> {
    const file = (await postJson(`${sim}/control/media/files`, { name: 'shot.png', mime: 'image/png', base64: randomBytes(64).toString('base64'), ...fields })) as { id: string };
    return file.id;
  }

  it('Slack: a remote file (its url_private is the sharer\'s link) is not fetched; the user is told in one line', async () => {
    const id = await upload({ external_url: `${attackerUrl}/steal?remote` });
    await system.sendSlack({ channel: 'D0HOSTS01', text: 'look at this', files: [id] });
    await system.sendSlack({ channel: 'D0HOSTS01', text: 'still there?' });
    expect((await system.waitForSlack('D0HOSTS01', 2)).map((m) => m.text)).toEqual([mediaNotices.not_hosted, 'echo: still there?']);
    expect(seen.filter((r) => r.url.includes('remote'))).toEqual([]);
  });

  it('Slack: a url_private_download on another host is refused, so the bot token never leaves', async () => {
    const id = await upload({ download_url: `${attackerUrl}/steal?download` });
    await system.sendSlack({ channel: 'D0HOSTS02', text: '', files: [id] });
    expect((await system.waitForSlack('D0HOSTS02', 1)).map((m) => m.text)).toEqual([mediaNotices.not_hosted]);
    expect(seen.filter((r) => r.url.includes('download'))).toEqual([]);
  });

  it('Slack and Discord: a download that redirects to another host is not followed (the token stays with Slack)', async () => {
    const slackFile = await upload({ redirect_to: `${attackerUrl}/steal?redirect-slack` });
    await system.sendSlack({ channel: 'D0HOSTS03', text: '', files: [slackFile] });
    expect((await system.waitForSlack('D0HOSTS03', 1)).map((m) => m.text)).toEqual([mediaNotices.not_hosted]);
    const discordFile = await upload({ redirect_to: `${attackerUrl}/steal?redirect-discord` });
    await sendDiscordMessage(sim, { channelId: '5100000000000000901', content: '', attachments: [discordFile] });
    expect((await waitForDiscordMessages(sim, '5100000000000000901', 1)).map((m) => m.content)).toEqual([mediaNotices.not_hosted]);
    expect(seen.filter((r) => r.url.includes('redirect'))).toEqual([]);
  });

  it('an ordinary Slack file on the platform\'s host is still read with the token', async () => {
    const id = await upload({});
    await system.sendSlack({ channel: 'D0HOSTS04', text: 'ordinary', files: [id] });
    const [reply] = await system.waitForSlack('D0HOSTS04', 1);
    expect(reply?.text).toMatch(/^echo: ordinary/);
    // Whatever else happened in this file, no request with the token ever reached the other host.
    expect(seen.filter((r) => r.headers.authorization?.includes(slackBotToken))).toEqual([]);
    expect(seen).toEqual([]);
  });
});
