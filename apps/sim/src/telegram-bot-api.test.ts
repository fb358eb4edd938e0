import { Api, GrammyError } from 'grammy';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createSim, simEventName, type SentRecord, type Sim, type SimEvent } from './index.ts';

const token = '424242:sim-test-token';

let sim: Sim;
let baseUrl: string;
let api: Api;

beforeAll(async () => {
  sim = await createSim({ telegramBotToken: token, logLevel: 'silent' });
  baseUrl = await sim.listen(0);
  api = new Api(token, { apiRoot: baseUrl });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => sim.reset());

async function control(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: init?.method ?? (init?.body === undefined ? 'GET' : 'POST'),
    headers: init?.body === undefined ? {} : { 'content-type': 'application/json' },
    body: init?.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, json: await response.json() };
}

async function expectGrammyError(call: Promise<unknown>): Promise<GrammyError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GrammyError);
  return error as GrammyError;
}

describe('Bot API through grammY', () => {
  it('getMe describes the bot with the id taken from the token', async () => {
    const me = await api.getMe();
    expect(me).toEqual({
      id: 424242,
      is_bot: true,
      first_name: 'Switchboard Sim',
      username: 'switchboard_sim_bot',
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    });
  });

  it('rejects another token with 401 Unauthorized', async () => {
    const error = await expectGrammyError(new Api('1:other', { apiRoot: baseUrl }).getMe());
    expect(error.error_code).toBe(401);
    expect(error.description).toBe('Unauthorized');
  });

  it('answers an unknown method with 404 Not Found', async () => {
    const response = await fetch(`${baseUrl}/bot${token}/sendTelepathy`, { method: 'POST' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ ok: false, error_code: 404, description: 'Not Found' });
  });

  it('sendMessage returns a Message with per-chat increasing ids and records it', async () => {
    const first = await api.sendMessage(1001, 'hello');
    const second = await api.sendMessage(1001, 'again', { message_thread_id: 7 });
    const elsewhere = await api.sendMessage(-1002, 'group hello');

    expect(first).toMatchObject({ message_id: 1, chat: { id: 1001, type: 'private' }, from: { id: 424242, is_bot: true }, text: 'hello' });
    expect(typeof first.date).toBe('number');
    expect(second).toMatchObject({ message_id: 2, message_thread_id: 7, is_topic_message: true });
    expect(elsewhere).toMatchObject({ message_id: 1, chat: { id: -1002, type: 'group' } });

    const { json } = await control('/control/telegram/sent?chat_id=1001');
    const sent = json as SentRecord[];
    expect(sent.map((record) => [record.message_id, record.text, record.message_thread_id])).toEqual([
      [1, 'hello', undefined],
      [2, 'again', 7],
    ]);
    expect(sent[0]?.sentAt).toBeGreaterThan(0);
    const after = await control('/control/telegram/sent?chat_id=1001&after_message_id=1');
    expect((after.json as SentRecord[]).map((record) => record.message_id)).toEqual([2]);
  });

  it('resolves reply_parameters against known messages', async () => {
    const original = await api.sendMessage(1003, 'original');
    const reply = await api.sendMessage(1003, 'reply', { reply_parameters: { message_id: original.message_id } });
    expect(reply.reply_to_message).toMatchObject({ message_id: original.message_id, text: 'original' });

    const missing = await expectGrammyError(api.sendMessage(1003, 'x', { reply_parameters: { message_id: 999 } }));
    expect(missing.description).toBe('Bad Request: message to be replied not found');
    const tolerated = await api.sendMessage(1003, 'x', { reply_parameters: { message_id: 999, allow_sending_without_reply: true } });
    expect(tolerated.reply_to_message).toBeUndefined();
  });

  it('enforces 1-4096 characters', async () => {
    expect((await expectGrammyError(api.sendMessage(1004, ''))).description).toBe('Bad Request: message text is empty');
    const long = await expectGrammyError(api.sendMessage(1004, 'x'.repeat(4097)));
    expect(long.error_code).toBe(400);
    expect(long.description).toBe('Bad Request: message is too long');
    await expect(api.sendMessage(1004, 'x'.repeat(4096))).resolves.toMatchObject({ message_id: 1 });
  });

  it('rejects MarkdownV2 with an unescaped reserved character and accepts it escaped', async () => {
    const error = await expectGrammyError(api.sendMessage(1005, 'Done. *bold*', { parse_mode: 'MarkdownV2' }));
    expect(error.error_code).toBe(400);
    expect(error.description).toBe("Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'");

    const ok = await api.sendMessage(1005, 'Done\\. *bold* [link](https://example.com/a_(b\\))', { parse_mode: 'MarkdownV2' });
    expect(ok.text).toBe('Done. bold link');
    const { json } = await control('/control/telegram/sent?chat_id=1005');
    expect(json).toMatchObject([{ text: 'Done. bold link', parse_mode: 'MarkdownV2', rawText: 'Done\\. *bold* [link](https://example.com/a_(b\\))' }]);
  });

  it('rejects HTML with an unclosed or unsupported tag', async () => {
    const unclosed = await expectGrammyError(api.sendMessage(1006, '<b>bold', { parse_mode: 'HTML' }));
    expect(unclosed.description).toMatch(/^Bad Request: can't parse entities: /);
    const unknown = await expectGrammyError(api.sendMessage(1006, 'a<br>b', { parse_mode: 'HTML' }));
    expect(unknown.description).toContain('Unsupported start tag "br"');
    const ok = await api.sendMessage(1006, '<b>1 &lt; 2</b> &amp; <i>fine</i>', { parse_mode: 'HTML' });
    expect(ok.text).toBe('1 < 2 & fine');
  });

  it('answers the next N calls of a method with 429 and retry_after when a fault is armed', async () => {
    const armed = await control('/control/telegram/faults', { body: { method: 'sendMessage', kind: '429', times: 2, retryAfter: 3 } });
    expect(armed.status).toBe(200);

    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error = await expectGrammyError(api.sendMessage(1007, 'limited'));
      expect(error.error_code).toBe(429);
      expect(error.description).toBe('Too Many Requests: retry after 3');
      expect(error.parameters.retry_after).toBe(3);
    }
    await expect(api.sendMessage(1007, 'through')).resolves.toMatchObject({ text: 'through' });
    // getMe was never armed.
    await expect(api.getMe()).resolves.toMatchObject({ id: 424242 });
    const { json } = await control('/control/telegram/sent?chat_id=1007');
    expect((json as SentRecord[]).map((record) => record.text)).toEqual(['through']);
  });

  it('answers with a 5xx fault and clears faults on DELETE', async () => {
    await control('/control/telegram/faults', { body: { method: '*', kind: '502', times: 5 } });
    const error = await expectGrammyError(api.sendChatAction(1008, 'typing'));
    expect(error.error_code).toBe(502);
    await control('/control/telegram/faults', { method: 'DELETE' });
    await expect(api.sendChatAction(1008, 'typing')).resolves.toBe(true);
  });

  it('answers an armed refuse-markup with 400 "can\'t parse entities", then the next call goes through', async () => {
    await control('/control/telegram/faults', { body: { method: 'sendMessage', kind: 'refuse-markup' } });
    const error = await expectGrammyError(api.sendMessage(1011, '<b>fine</b>', { parse_mode: 'HTML' }));
    expect([error.error_code, error.description]).toEqual([400, expect.stringMatching(/^Bad Request: can't parse entities: /)]);
    await expect(api.sendMessage(1011, '**plain**')).resolves.toMatchObject({ text: '**plain**' });
  });

  it('delays a call by the armed delay and then answers normally', async () => {
    await control('/control/telegram/faults', { body: { method: 'sendMessage', kind: 'delay', delayMs: 300 } });
    const startedAt = performance.now();
    await api.sendMessage(1009, 'slow');
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);
  });

  it('records chat actions and rejects unknown ones', async () => {
    await expect(api.sendChatAction(1010, 'typing', { message_thread_id: 4 })).resolves.toBe(true);
    const { json } = await control('/control/telegram/actions?chat_id=1010');
    expect(json).toMatchObject([{ chat_id: 1010, action: 'typing', message_thread_id: 4 }]);
    const response = await fetch(`${baseUrl}/bot${token}/sendChatAction?chat_id=1010&action=dancing`);
    expect(response.status).toBe(400);
  });

  it('edits a sent message and records the edit', async () => {
    const sent = await api.sendMessage(1011, 'draft');
    const edited = await api.editMessageText(1011, sent.message_id, 'final');
    expect(edited).toMatchObject({ message_id: sent.message_id, text: 'final' });
    expect(typeof (edited as { edit_date?: number }).edit_date).toBe('number');
    const same = await expectGrammyError(api.editMessageText(1011, sent.message_id, 'final'));
    expect(same.description).toMatch(/^Bad Request: message is not modified/);
    const missing = await expectGrammyError(api.editMessageText(1011, 99, 'nope'));
    expect(missing.description).toBe('Bad Request: message to edit not found');
    const { json } = await control('/control/telegram/sent?chat_id=1011');
    expect(json).toMatchObject([{ message_id: sent.message_id, text: 'final', edits: [{ text: 'final' }] }]);
  });

  it('accepts form-urlencoded and query parameters', async () => {
    const form = await fetch(`${baseUrl}/bot${token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ chat_id: '1012', text: 'from a form', reply_parameters: JSON.stringify({ message_id: 5, allow_sending_without_reply: true }) }),
    });
    expect(await form.json()).toMatchObject({ ok: true, result: { chat: { id: 1012 }, text: 'from a form' } });
    const query = await fetch(`${baseUrl}/bot${token}/sendMessage?chat_id=1012&text=from%20a%20query`);
    expect(await query.json()).toMatchObject({ ok: true, result: { message_id: 2, text: 'from a query' } });
  });

  it('answers a malformed JSON body with a Bot API 400', async () => {
    const response = await fetch(`${baseUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chat_id":' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ ok: false, error_code: 400 });
  });

  it('wakes /control/telegram/wait when the awaited message is sent', async () => {
    const waiting = control('/control/telegram/wait?chat_id=1013&count=2&timeout_ms=5000');
    await api.sendMessage(1013, 'one');
    await api.sendMessage(1013, 'two');
    const { status, json } = await waiting;
    expect(status).toBe(200);
    expect((json as SentRecord[]).map((record) => record.text)).toEqual(['one', 'two']);

    const timedOut = await control('/control/telegram/wait?chat_id=1013&count=3&timeout_ms=50');
    expect(timedOut.status).toBe(408);
    expect(timedOut.json).toMatchObject({ error: 'timeout', sent: [{ text: 'one' }, { text: 'two' }] });
  });
});

describe('getUpdates', () => {
  it('long-polls until an update arrives and forgets it once confirmed', async () => {
    const polling = api.getUpdates({ timeout: 5 });
    const injected = await control('/control/telegram/updates', { body: { chat: { id: 2001 }, text: 'hi there' } });
    expect(injected.json).toMatchObject({ delivered: false, queued: true });

    const updates = await polling;
    expect(updates).toHaveLength(1);
    const [update] = updates;
    expect(update?.message).toMatchObject({ chat: { id: 2001, type: 'private' }, from: { id: 2001, is_bot: false }, text: 'hi there' });

    const again = await api.getUpdates({ timeout: 0 });
    expect(again.map((entry) => entry.update_id)).toEqual([update?.update_id]);
    const confirmed = await api.getUpdates({ offset: (update?.update_id ?? 0) + 1, timeout: 0 });
    expect(confirmed).toEqual([]);
  });

  it('numbers updates consecutively and builds command and mention entities', async () => {
    const one = await control('/control/telegram/updates', { body: { chat: { id: -1001234567890, type: 'supergroup', title: 'Team' }, from: { id: 9, first_name: 'Ann' }, text: '/ask@switchboard_sim_bot hi @someone_else', message_thread_id: 12 } });
    const two = await control('/control/telegram/updates', { body: { chat: { id: -1001234567890 }, from: { id: 9 }, text: 'second', reply_to_message_id: 1 } });
    const first = (one.json as { update: { update_id: number; message: Record<string, unknown> } }).update;
    const second = (two.json as { update: { update_id: number; message: Record<string, unknown> } }).update;
    expect(second.update_id).toBe(first.update_id + 1);
    expect(first.message).toMatchObject({
      message_id: 1,
      message_thread_id: 12,
      is_topic_message: true,
      chat: { id: -1001234567890, type: 'supergroup', title: 'Team' },
      entities: [
        { type: 'bot_command', offset: 0, length: 24 },
        { type: 'mention', offset: 28, length: 13 },
      ],
    });
    expect(second.message).toMatchObject({ message_id: 2, reply_to_message: { message_id: 1, text: first.message.text } });
  });

  it('refuses getUpdates with 409 while a webhook is set', async () => {
    await api.setWebhook('http://127.0.0.1:9/telegram', { secret_token: 'abc_DEF-123' });
    const error = await expectGrammyError(api.getUpdates());
    expect(error.error_code).toBe(409);
    expect(error.description).toBe("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    expect(await api.getWebhookInfo()).toMatchObject({ url: 'http://127.0.0.1:9/telegram', pending_update_count: 0 });
    await api.deleteWebhook();
    await expect(api.getUpdates({ timeout: 0 })).resolves.toEqual([]);
  });

  it('validates the webhook secret token characters', async () => {
    const error = await expectGrammyError(api.setWebhook('http://127.0.0.1:9/telegram', { secret_token: 'not allowed!' }));
    expect(error.error_code).toBe(400);
  });

  it('ends an older long poll with 409 when a newer one starts', async () => {
    // The older call must have reached the sim before the newer one is sent.
    const started = new Promise<void>((resolve) => {
      const onEvent = (event: SimEvent) => {
        if (event.type !== 'telegram.poll') return;
        sim.state.events.off(simEventName, onEvent);
        resolve();
      };
      sim.state.events.on(simEventName, onEvent);
    });
    const older = api.getUpdates({ timeout: 5 });
    await started;
    const newer = api.getUpdates({ timeout: 0 });
    const error = await expectGrammyError(older);
    expect(error.error_code).toBe(409);
    await expect(newer).resolves.toEqual([]);
  });
});
