import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaNotices } from '@switchboard/core';
import { sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { postJson, TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

/** Small on purpose: the too-large case needs no megabytes. */
const maxBytes = 4096;

type Part = { type: string; text?: string; image_url?: { url: string } };
type ModelMessage = { role: string; content: string | Part[] };

/** Uploads a file to the simulated platforms; returns its sim id and the sha256 of its bytes. */
async function uploadFile(sim: string, file: { name: string; mime: string; bytes?: Buffer; text?: string; announcedSize?: number }): Promise<{ id: string; sha256: string }> {
  return (await postJson(`${sim}/control/media/files`, {
    name: file.name,
    mime: file.mime,
    ...(file.bytes ? { base64: file.bytes.toString('base64') } : { text: file.text ?? '' }),
    ...(file.announcedSize !== undefined ? { announced_size: file.announcedSize } : {}),
  })) as { id: string; sha256: string };
}

async function modelRequests(sim: string): Promise<{ body: { messages: ModelMessage[] } }[]> {
  return (await (await fetch(`${sim}/control/model/requests`)).json()) as { body: { messages: ModelMessage[] } }[];
}

/** The last user message of the model request whose last user message passes `match`. */
async function findUserMessage(sim: string, match: (message: ModelMessage) => boolean): Promise<ModelMessage | undefined> {
  for (const request of (await modelRequests(sim)).reverse()) {
    const user = request.body.messages.filter((m) => m.role === 'user').at(-1);
    if (user && match(user)) return user;
  }
  return undefined;
}

const textOf = (message: ModelMessage | undefined): string =>
  typeof message?.content === 'string' ? message.content : (message?.content.find((part) => part.type === 'text')?.text ?? '');
const imageUrlsOf = (message: ModelMessage | undefined): string[] =>
  typeof message?.content === 'string' ? [] : (message?.content ?? []).flatMap((part) => (part.image_url ? [part.image_url.url] : []));

describe('photos, documents and voice reach the model', () => {
  let system: TestSystem;
  let sim: string;

  beforeAll(async () => {
    system = await TestSystem.start({
      slack: true,
      discord: true,
      transcribe: true,
      // queue: a message sent right behind a file waits for it (interrupt would stop the file's turn instead, docs/media.md).
      workerEnv: { BUSY_INPUT_MODE: 'queue', MEDIA_MAX_BYTES: String(maxBytes), MEDIA_FETCH_TIMEOUT_MS: '1000', TRANSCRIBE_MODEL: 'sim-whisper' },
    });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
  });
  afterAll(async () => {
    await system?.close();
  });

  async function sendTelegramFile(chatId: number, fields: Record<string, unknown>): Promise<void> {
    await postJson(`${sim}/control/telegram/updates`, { chat: { id: chatId, type: 'private' }, from: { id: chatId, first_name: 'Tester' }, ...fields });
  }

  it('Telegram: a photo with a caption reaches the model as text and an image_url data URL of its bytes', async () => {
    const bytes = randomBytes(1500);
    const photo = await uploadFile(sim, { name: 'p.jpg', mime: 'image/jpeg', bytes });
    await sendTelegramFile(701, { photo: photo.id, caption: 'what is in this picture?' });
    const [reply] = await system.waitForTelegram(701, 1);
    expect(reply?.text).toMatch(/^echo: what is in this picture\?/);
    const user = await findUserMessage(sim, (m) => textOf(m).startsWith('what is in this picture?'));
    expect(imageUrlsOf(user)).toEqual([`data:image/jpeg;base64,${bytes.toString('base64')}`]);
    expect(textOf(user)).toBe(`what is in this picture?\n\n[image: photo.jpg, sha256 ${photo.sha256.slice(0, 12)}]`);
    // The reference is stored with its hash; the transcript keeps a placeholder, never the bytes.
    const [event] = await system.sql<{ attachments: { kind: string; sha256: string; ref: string }[] }[]>`
      select e.attachments from inbound_events e join conversations c on c.id = e.conversation_id where c.chat_id = '701'`;
    expect(event?.attachments).toEqual([expect.objectContaining({ kind: 'image', ref: photo.id, sha256: photo.sha256 })]);
    const rows = await system.sql<{ content: string }[]>`
      select m.content from messages m join conversations c on c.current_session_id = m.session_id where c.chat_id = '701' and m.role = 'user'`;
    expect(rows.map((r) => r.content)).toEqual([textOf(user)]);
  });

  it('Telegram: a photo without a caption reaches the model, and later turns see only its placeholder', async () => {
    const bytes = randomBytes(800);
    const photo = await uploadFile(sim, { name: 'q.jpg', mime: 'image/jpeg', bytes });
    await sendTelegramFile(702, { photo: photo.id });
    await system.waitForTelegram(702, 1);
    const user = await findUserMessage(sim, (m) => textOf(m) === `[image: photo.jpg, sha256 ${photo.sha256.slice(0, 12)}]`);
    expect(imageUrlsOf(user)).toEqual([`data:image/jpeg;base64,${bytes.toString('base64')}`]);
    await system.sendTelegram({ chatId: 702, text: 'and now?' });
    await system.waitForTelegram(702, 2);
    const later = (await modelRequests(sim)).reverse().find((r) => r.body.messages.some((m) => m.content === 'and now?'));
    expect(later?.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([textOf(user), 'and now?']);
  });

  it('Telegram: a Markdown document reaches the model as text with its file name', async () => {
    const doc = await uploadFile(sim, { name: 'notes.md', mime: 'text/markdown', text: '# Plan\n- ship media\n' });
    await sendTelegramFile(703, { document: doc.id, caption: 'summarise' });
    await system.waitForTelegram(703, 1);
    const user = await findUserMessage(sim, (m) => textOf(m).startsWith('summarise'));
    expect(user?.content).toBe('summarise\n\n[file: notes.md]\n# Plan\n- ship media\n');
  });

  it('Telegram: a voice message is transcribed and the transcript is the user message', async () => {
    const audio = randomBytes(600);
    const voice = await uploadFile(sim, { name: 'voice.oga', mime: 'audio/ogg', bytes: audio });
    await postJson(`${sim}/control/media/transcripts`, { sha256: voice.sha256, text: 'remind me to water the plants' });
    await sendTelegramFile(704, { voice: voice.id });
    const [reply] = await system.waitForTelegram(704, 1);
    expect(reply?.text).toBe('echo: remind me to water the plants');
    const transcriptions = (await (await fetch(`${sim}/control/media/transcriptions`)).json()) as { model: string; sha256: string }[];
    expect(transcriptions).toContainEqual(expect.objectContaining({ model: 'sim-whisper', sha256: voice.sha256 }));
  });

  it('Telegram: a file over MEDIA_MAX_BYTES or of an unsupported kind gets one short reply and nothing reaches the model', async () => {
    const big = await uploadFile(sim, { name: 'big.txt', mime: 'text/plain', text: 'x'.repeat(maxBytes + 1) });
    // Announced as small: the cap holds while downloading too.
    const lying = await uploadFile(sim, { name: 'lying.txt', mime: 'text/plain', text: 'y'.repeat(maxBytes + 1), announcedSize: 10 });
    const zip = await uploadFile(sim, { name: 'a.zip', mime: 'application/zip', bytes: randomBytes(100) });
    const before = (await modelRequests(sim)).length;
    await sendTelegramFile(705, { document: big.id });
    expect((await system.waitForTelegram(705, 1)).map((m) => m.text)).toEqual([mediaNotices.too_large]);
    await sendTelegramFile(705, { document: lying.id });
    await sendTelegramFile(705, { document: zip.id });
    await system.sendTelegram({ chatId: 705, text: 'after the files' });
    const replies = (await system.waitForTelegram(705, 4)).map((m) => m.text);
    expect(replies).toEqual([mediaNotices.too_large, mediaNotices.too_large, mediaNotices.unsupported, 'echo: after the files']);
    expect((await modelRequests(sim)).length - before).toBe(1);
  });

  it('Telegram: a download failing 500 or timing out tells the user, and the message behind it is answered', async () => {
    const photo = await uploadFile(sim, { name: 'r.jpg', mime: 'image/jpeg', bytes: randomBytes(300) });
    await postJson(`${sim}/control/media/faults`, { method: 'telegram', kind: '500', times: 1 });
    await sendTelegramFile(706, { photo: photo.id });
    await system.sendTelegram({ chatId: 706, text: 'behind the photo' });
    expect((await system.waitForTelegram(706, 2)).map((m) => m.text)).toEqual([mediaNotices.fetch_failed, 'echo: behind the photo']);
    // Longer than MEDIA_FETCH_TIMEOUT_MS (1 s).
    await postJson(`${sim}/control/media/faults`, { method: 'telegram', kind: 'delay', delayMs: 4000, times: 1 });
    await sendTelegramFile(706, { photo: photo.id });
    await system.sendTelegram({ chatId: 706, text: 'behind the slow photo' });
    expect((await system.waitForTelegram(706, 4)).map((m) => m.text).slice(2)).toEqual([mediaNotices.fetch_failed, 'echo: behind the slow photo']);
    expect((await fetch(`${system.gateway.url}/healthz`)).status).toBe(200);
  });

  it('Slack: a shared image reaches the model with its bytes, fetched with files.info and the bot token', async () => {
    const bytes = randomBytes(900);
    const image = await uploadFile(sim, { name: 'screen.png', mime: 'image/png', bytes });
    await system.sendSlack({ channel: 'D0MEDIA01', text: 'see this', files: [image.id] });
    const [reply] = await system.waitForSlack('D0MEDIA01', 1);
    expect(reply?.text).toMatch(/^echo: see this/);
    const user = await findUserMessage(sim, (m) => textOf(m).startsWith('see this'));
    expect(imageUrlsOf(user)).toEqual([`data:image/png;base64,${bytes.toString('base64')}`]);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(image.sha256);
  });

  it('Slack: a CSV in a mention reaches the model as text with its file name', async () => {
    const csv = await uploadFile(sim, { name: 'sales.csv', mime: 'text/csv', text: 'month,total\njan,3\n' });
    await system.sendSlack({ channel: 'C0MEDIA02', text: '<@U0SIMBOT> total?', files: [csv.id] });
    await system.waitForSlack('C0MEDIA02', 1);
    const user = await findUserMessage(sim, (m) => textOf(m).includes('[file: sales.csv]'));
    expect(textOf(user)).toBe('<@U0SIMBOT> total?\n\n[file: sales.csv]\nmonth,total\njan,3\n');
  });

  it('Discord: an image attachment and a voice message reach the model', async () => {
    const bytes = randomBytes(700);
    const image = await uploadFile(sim, { name: 'cat.webp', mime: 'image/webp', bytes });
    await sendDiscordMessage(sim, { channelId: '5100000000000000001', content: 'a cat?', attachments: [image.id] });
    await waitForDiscordMessages(sim, '5100000000000000001', 1);
    const user = await findUserMessage(sim, (m) => textOf(m).startsWith('a cat?'));
    expect(imageUrlsOf(user)).toEqual([`data:image/webp;base64,${bytes.toString('base64')}`]);

    const voice = await uploadFile(sim, { name: 'voice-message.ogg', mime: 'audio/ogg', bytes: randomBytes(400) });
    await postJson(`${sim}/control/media/transcripts`, { sha256: voice.sha256, text: 'what time is it' });
    await sendDiscordMessage(sim, { channelId: '5100000000000000002', content: '', attachments: [voice.id], voice: true });
    const [reply] = await waitForDiscordMessages(sim, '5100000000000000002', 1);
    expect(reply?.content).toBe('echo: what time is it');
  });

  it('Slack, Discord and the transcriber: a failed download, a too-large attachment and a failed transcription each get one short reply', async () => {
    const image = await uploadFile(sim, { name: 'x.png', mime: 'image/png', bytes: randomBytes(100) });
    await postJson(`${sim}/control/media/faults`, { method: 'slack', kind: '503', times: 1 });
    await system.sendSlack({ channel: 'D0MEDIA03', text: '', files: [image.id] });
    await system.sendSlack({ channel: 'D0MEDIA03', text: 'still there?' });
    expect((await system.waitForSlack('D0MEDIA03', 2)).map((m) => m.text)).toEqual([mediaNotices.fetch_failed, 'echo: still there?']);

    const big = await uploadFile(sim, { name: 'big.png', mime: 'image/png', bytes: randomBytes(maxBytes + 1) });
    await sendDiscordMessage(sim, { channelId: '5100000000000000003', content: '', attachments: [big.id] });
    expect((await waitForDiscordMessages(sim, '5100000000000000003', 1)).map((m) => m.content)).toEqual([mediaNotices.too_large]);

    const voice = await uploadFile(sim, { name: 'v.oga', mime: 'audio/ogg', bytes: randomBytes(100) });
    await postJson(`${sim}/control/media/faults`, { method: 'transcribe', kind: '500', times: 1 });
    await sendTelegramFile(707, { voice: voice.id });
    expect((await system.waitForTelegram(707, 1)).map((m) => m.text)).toEqual([mediaNotices.transcribe_failed]);
  });
});

describe('voice without TRANSCRIBE_BASE_URL', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start();
  });
  afterAll(async () => {
    await system?.close();
  });

  it('answers a voice message with one short reply and asks the model nothing', async () => {
    const voice = await uploadFile(system.simUrl, { name: 'v.oga', mime: 'audio/ogg', bytes: randomBytes(200) });
    await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 801, type: 'private' }, voice: voice.id });
    await system.sendTelegram({ chatId: 801, text: 'typed instead' });
    expect((await system.waitForTelegram(801, 2)).map((m) => m.text)).toEqual([mediaNotices.voice_off, 'echo: typed instead']);
    expect((await modelRequests(system.simUrl)).length).toBe(1);
    const downloads = (await (await fetch(`${system.simUrl}/control/media/downloads`)).json()) as unknown[];
    expect(downloads).toEqual([]);
  });

  it('under busy mode interrupt, a message right behind a slow photo stops its turn; the photo stays in the history, unread', async () => {
    const photo = await uploadFile(system.simUrl, { name: 's.jpg', mime: 'image/jpeg', bytes: randomBytes(200) });
    await postJson(`${system.simUrl}/control/media/faults`, { method: 'telegram', kind: 'delay', delayMs: 3000, times: 1 });
    await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 802, type: 'private' }, photo: photo.id, caption: 'slow one' });
    // Only once the photo's turn is downloading (it took the armed delay) is "never mind" behind a running turn; sent
    // earlier, a loaded machine may hand both to one turn, which reads the photo, and there is nothing to interrupt.
    await waitForCondition('the photo turn downloading', async () => ((await (await fetch(`${system.simUrl}/control/media/faults`)).json()) as unknown[]).length === 0);
    await system.sendTelegram({ chatId: 802, text: 'never mind' });
    expect((await system.waitForTelegram(802, 1)).map((m) => m.text)).toEqual(['echo: never mind']);
    const request = (await modelRequests(system.simUrl)).reverse().find((r) => r.body.messages.some((m) => m.content === 'never mind'));
    expect(request?.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['slow one\n\n[image: photo.jpg, not read]', 'never mind']);
  });
});

describe('the transcriber\'s key (issue 30, finding 8)', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // The transcriber is another origin than MODEL_BASE_URL and has no TRANSCRIBE_API_KEY: before, it got MODEL_API_KEY.
    system = await TestSystem.start({ transcribe: 'other-origin', workerEnv: { MODEL_API_KEY: 'sk-model-provider-secret' } });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('a transcriber on another origin never receives MODEL_API_KEY; the voice message is still transcribed', async () => {
    const voice = await uploadFile(system.simUrl, { name: 'v.oga', mime: 'audio/ogg', bytes: randomBytes(200) });
    await postJson(`${system.simUrl}/control/media/transcripts`, { sha256: voice.sha256, text: 'hello by voice' });
    await postJson(`${system.simUrl}/control/telegram/updates`, { chat: { id: 811, type: 'private' }, voice: voice.id });
    expect((await system.waitForTelegram(811, 1)).map((m) => m.text)).toEqual(['echo: hello by voice']);
    const transcriptions = (await (await fetch(`${system.simUrl}/control/media/transcriptions`)).json()) as { sha256: string; authorization?: string }[];
    expect(transcriptions.map((t) => t.sha256)).toEqual([voice.sha256]);
    expect(transcriptions[0]?.authorization ?? '').not.toContain('sk-model-provider-secret');
  });
});

describe('the turn\'s media budget (issue 30, finding 3)', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({
      slack: true,
      workerEnv: { MEDIA_MAX_BYTES: '4096', MEDIA_TURN_MAX_BYTES: '6000', MEDIA_TURN_MAX_IMAGES: '1', MEDIA_DOCUMENT_MAX_CHARS: '200' },
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('a long document reaches the model cut, with a line saying so', async () => {
    const text = 'x'.repeat(150) + 'TAIL-NOT-READ'.repeat(20);
    const doc = await uploadFile(system.simUrl, { name: 'long.txt', mime: 'text/plain', text });
    await system.sendSlack({ channel: 'D0BUDGET1', text: 'read this', files: [doc.id] });
    await system.waitForSlack('D0BUDGET1', 1);
    const user = await findUserMessage(system.simUrl, (m) => textOf(m).startsWith('read this'));
    expect(textOf(user)).toContain(`[cut: the document is ${text.length} characters long; only the first 200 were read]`);
    expect(textOf(user).match(/TAIL-NOT-READ/g)?.length ?? 0).toBeLessThan(5);
  });

  it('files past the turn\'s bytes or images get one short reply, and the next message is answered', async () => {
    const a = await uploadFile(system.simUrl, { name: 'a.txt', mime: 'text/plain', text: 'a'.repeat(3500) });
    const b = await uploadFile(system.simUrl, { name: 'b.txt', mime: 'text/plain', text: 'b'.repeat(3500) });
    await system.sendSlack({ channel: 'D0BUDGET2', text: 'two big ones', files: [a.id, b.id] });
    const one = await uploadFile(system.simUrl, { name: 'p1.png', mime: 'image/png', bytes: randomBytes(100) });
    const two = await uploadFile(system.simUrl, { name: 'p2.png', mime: 'image/png', bytes: randomBytes(100) });
    await system.sendSlack({ channel: 'D0BUDGET3', text: 'two pictures', files: [one.id, two.id] });
    expect((await system.waitForSlack('D0BUDGET2', 1)).map((m) => m.text)).toEqual([mediaNotices.over_budget]);
    expect((await system.waitForSlack('D0BUDGET3', 1)).map((m) => m.text)).toEqual([mediaNotices.over_budget]);
    await system.sendSlack({ channel: 'D0BUDGET2', text: 'still there?' });
    expect((await system.waitForSlack('D0BUDGET2', 2))[1]?.text).toBe('echo: still there?');
  });
});
