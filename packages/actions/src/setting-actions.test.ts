import { beforeAll, describe, expect, it } from 'vitest';
import { listAuditEntries, loadConversation, recordAuditEntry, storeInboundEvent, type DbExecutor } from '@switchboard/db';
import { useTestDbClient } from '@switchboard/db/testing';
import type { Door } from './door.ts';
import { createSettingActions, modelSettingOf, type ModelOutcome, type SettingActions, type StreamingOutcome } from './setting-actions.ts';

const db = useTestDbClient({ max: 4 });

/**
 * The operator's door: writes an audit row in the action's transaction and
 * keeps the outcomes it was told; `fail` makes the audit fail after its row
 * is written (neither the row nor the change may outlive it).
 */
function operator<T>(fail = false): Door<T> & { recorded: T[] } {
  const recorded: T[] = [];
  return {
    kind: 'operator',
    recorded,
    record: async (tx: DbExecutor, outcome: T) => {
      recorded.push(outcome);
      await recordAuditEntry(tx, { actor: 'test', action: 'setting', target: 'conversation', result: fail ? 'failed' : 'ok', detail: { outcome } });
      if (fail) throw new Error('audit write failed');
    },
  };
}

const failedAudits = async () => (await listAuditEntries(db.client.db, { limit: 500 })).items.filter((i) => i.result === 'failed');

async function newConversation(chatId: string) {
  const stored = await storeInboundEvent(db.client.db, {
    platform: 'telegram', accountId: 'bot', eventId: `s-${chatId}`, conversationKey: `telegram:bot:${chatId}::`,
    chatId, threadId: '', userScope: '', userId: `u${chatId}`, text: 'hello', replyTarget: { chat_id: Number(chatId) }, refuseAtPending: null,
  });
  return { conversationId: stored.conversationId, eventId: stored.inboundEventId };
}

const settingsOf = async (conversationId: number) => {
  const row = await loadConversation(db.client.db, conversationId);
  return { streaming: row?.streaming, model: row?.model, modelFallback: row?.modelFallback };
};

describe('createSettingActions', () => {
  let actions: SettingActions;
  // Built once the test database exists (useTestDbClient creates it before the tests).
  beforeAll(() => {
    actions = createSettingActions({ db: db.client.db });
  });

  describe('setStreaming', () => {
    it('sets and clears the setting through the operator door, each change recorded with what it did', async () => {
      const { conversationId } = await newConversation('3301');
      const door = operator<StreamingOutcome>();
      expect(await actions.setStreaming(conversationId, 'off', door)).toEqual({ kind: 'set', streaming: 'off' });
      expect((await settingsOf(conversationId)).streaming).toBe('off');
      expect(await actions.setStreaming(conversationId, null, door)).toEqual({ kind: 'set', streaming: null });
      expect(await actions.setStreaming(987_654, 'on', door)).toEqual({ kind: 'not_found' });
      expect(door.recorded).toEqual([{ kind: 'set', streaming: 'off' }, { kind: 'set', streaming: null }, { kind: 'not_found' }]);
      expect((await settingsOf(conversationId)).streaming).toBeNull();
    });

    it('changes nothing when its audit row cannot be written', async () => {
      const { conversationId } = await newConversation('3302');
      await expect(actions.setStreaming(conversationId, 'on', operator(true))).rejects.toThrow('audit write failed');
      expect((await settingsOf(conversationId)).streaming).toBeNull();
      expect(await failedAudits()).toEqual([]);
    });

    it('through the chat door, applies a command once per event', async () => {
      const { conversationId, eventId } = await newConversation('3303');
      const door = { kind: 'chat' as const, inboundEventId: eventId };
      expect(await actions.setStreaming(conversationId, 'on', door)).toEqual({ kind: 'set', streaming: 'on' });
      expect(await actions.setStreaming(conversationId, 'off', door)).toEqual({ kind: 'already_applied' });
      expect((await settingsOf(conversationId)).streaming).toBe('on');
    });
  });

  describe('setModel', () => {
    it('stores the chosen model, fallback off unless asked and never kept for a cleared model', async () => {
      const { conversationId } = await newConversation('3311');
      const door = operator<ModelOutcome>();
      expect(await actions.setModel(conversationId, { model: 'gpt-x' }, door)).toEqual({ kind: 'set', model: 'gpt-x', modelFallback: false });
      expect(await actions.setModel(conversationId, { model: 'gpt-y', fallback: true }, door)).toEqual({ kind: 'set', model: 'gpt-y', modelFallback: true });
      expect(await settingsOf(conversationId)).toMatchObject({ model: 'gpt-y', modelFallback: true });
      expect(await actions.setModel(conversationId, { model: null, fallback: true }, door)).toEqual({ kind: 'set', model: null, modelFallback: false });
      expect(await actions.setModel(987_654, { model: 'm' }, door)).toEqual({ kind: 'not_found' });
      expect(door.recorded.map((o) => o.kind)).toEqual(['set', 'set', 'set', 'not_found']);
      expect(await settingsOf(conversationId)).toMatchObject({ model: null, modelFallback: false });
    });

    it('changes nothing when its audit row cannot be written', async () => {
      const { conversationId } = await newConversation('3312');
      await expect(actions.setModel(conversationId, { model: 'gpt-x', fallback: true }, operator(true))).rejects.toThrow('audit write failed');
      expect(await settingsOf(conversationId)).toMatchObject({ model: null, modelFallback: false });
      expect(await failedAudits()).toEqual([]);
    });

    it('through the chat door, applies a command once per event', async () => {
      const { conversationId, eventId } = await newConversation('3313');
      const door = { kind: 'chat' as const, inboundEventId: eventId };
      expect(await actions.setModel(conversationId, { model: 'gpt-x' }, door)).toEqual({ kind: 'set', model: 'gpt-x', modelFallback: false });
      expect(await actions.setModel(conversationId, { model: 'gpt-z' }, door)).toEqual({ kind: 'already_applied' });
      expect((await settingsOf(conversationId)).model).toBe('gpt-x');
    });
  });
});

describe(modelSettingOf.name, () => {
  it('keeps the fallback flag only for a chosen model, false unless asked', () => {
    expect(modelSettingOf({ model: 'm' })).toEqual({ model: 'm', modelFallback: false });
    expect(modelSettingOf({ model: 'm', fallback: true })).toEqual({ model: 'm', modelFallback: true });
    expect(modelSettingOf({ model: null, fallback: true })).toEqual({ model: null, modelFallback: false });
  });
});
