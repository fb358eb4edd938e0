import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSim, type Sim } from './index.ts';

const telegramToken = '123:sim-media';
const slackToken = 'xoxb-sim-media';
let sim: Sim;
let base: string;

beforeAll(async () => {
  sim = await createSim({ logLevel: 'silent', telegramBotToken: telegramToken, slackBotToken: slackToken });
  base = await sim.listen(0);
});
afterAll(async () => {
  await sim.close();
});

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

describe('the simulated platforms serve users\' files', () => {
  it('Telegram: getFile names the path; the file URL answers only with the bot token', async () => {
    const { json: file } = await post('/control/media/files', { name: 'a.txt', mime: 'text/plain', text: 'hello' });
    const { json: got } = await post(`/bot${telegramToken}/getFile`, { file_id: file.id });
    const path = (got.result as { file_path: string }).file_path;
    expect(got.result).toMatchObject({ file_id: file.id, file_size: 5 });
    expect(await (await fetch(`${base}/file/bot${telegramToken}/${path}`)).text()).toBe('hello');
    expect((await fetch(`${base}/file/bot999:other/${path}`)).status).toBe(401);
    expect((await post(`/bot${telegramToken}/getFile`, { file_id: 'nope' })).status).toBe(400);
  });

  it('Slack: files.info names the private URL, which answers only with the bot token', async () => {
    const { json: file } = await post('/control/media/files', { name: 'b.csv', mime: 'text/csv', text: 'a,b' });
    const { json: info } = await post('/api/files.info', { file: file.id }, { authorization: `Bearer ${slackToken}` });
    const url = (info.file as { url_private: string }).url_private;
    expect((await fetch(url)).status).toBe(403);
    expect(await (await fetch(url, { headers: { authorization: `Bearer ${slackToken}` } })).text()).toBe('a,b');
    expect((await post('/api/files.info', { file: 'F404' }, { authorization: `Bearer ${slackToken}` })).json).toEqual({ ok: false, error: 'file_not_found' });
  });

  it('answers an armed download fault, then the file', async () => {
    const { json: file } = await post('/control/media/files', { name: 'c.png', mime: 'image/png', base64: 'AAEC' });
    await post('/control/media/faults', { method: 'discord', kind: '503', times: 1 });
    const url = `${base}/discord-cdn/attachments/1/${String(file.id)}/c.png`;
    expect((await fetch(url)).status).toBe(503);
    expect(Buffer.from(await (await fetch(url)).arrayBuffer())).toEqual(Buffer.from([0, 1, 2]));
  });

  it('transcribes multipart audio with the scripted text and records the call', async () => {
    const audio = Buffer.from('voice bytes');
    const { json: file } = await post('/control/media/files', { name: 'v.ogg', mime: 'audio/ogg', base64: audio.toString('base64') });
    await post('/control/media/transcripts', { sha256: file.sha256, text: 'hello there' });
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([audio], { type: 'audio/ogg' }), 'v.ogg');
    const response = await fetch(`${base}/v1/audio/transcriptions`, { method: 'POST', body: form });
    expect(await response.json()).toEqual({ text: 'hello there' });
    expect(sim.state.media.transcriptions).toEqual([expect.objectContaining({ model: 'whisper-1', fileName: 'v.ogg', sha256: file.sha256 })]);
  });
});
