import { decidePairingRequest, generatePairingCode, renderPairingCodeNotice } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { approvePairing, denyPairing, isPairedUser, listPendingPairings, requestPairing, revokePairedUser, type PairingRequestOutcome } from './pairing-store.ts';

const db = useTestDbClient();

const ask = (platform: string, userId: string): Promise<PairingRequestOutcome> =>
  requestPairing(db.client.db, {
    platform,
    accountId: 'bot',
    userId,
    conversation: { key: `${platform}:bot:${userId}::`, chatId: userId, threadId: '', userScope: '' },
    target: { chat_id: userId },
    decide: decidePairingRequest,
    newCode: generatePairingCode,
    render: renderPairingCodeNotice,
  });

const outboxTexts = async (userId: string) =>
  (await db.client.db.$client<{ text: string }[]>`select o.text from outbox o join conversations c on c.id = o.conversation_id where c.chat_id = ${userId} order by o.id`).map((r) => r.text);

describe('pairing store', () => {
  it('holds the cap of 3 pending codes per platform (the oldest evicted for a newcomer) and one code per user when requests race', async () => {
    const platform = 'race-platform';
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => ask(platform, `stranger-${i}`)),
      ...Array.from({ length: 4 }, () => ask(platform, 'stranger-0')),
    ]);
    const issued = results.filter((r) => r.kind === 'issued').length;
    expect(issued).toBeGreaterThanOrEqual(6);
    const [evicted] = await db.client.db.$client<{ n: number }[]>`select count(*)::int as n from pairings where platform = ${platform} and status = 'evicted'`;
    expect(evicted?.n).toBe(issued - 3);
    const pending = (await listPendingPairings(db.client.db, 100)).filter((p) => p.platform === platform);
    expect(pending).toHaveLength(3);
    expect(new Set(pending.map((p) => p.userId)).size).toBe(3);
    // Each pending code was queued for its user exactly once, in the same transaction (an evicted user's earlier code before it).
    for (const p of pending) expect((await outboxTexts(p.userId)).filter((text) => text.includes(p.code))).toHaveLength(1);
  });

  it('approves a pending code once: the user is paired and told; again, or an unknown code, changes nothing', async () => {
    const issued = await ask('approve-platform', 'u-approve');
    if (issued.kind !== 'issued') throw new Error(`expected a code, got ${issued.kind}`);
    const recorded: string[] = [];
    const approve = (code: string) => approvePairing(db.client.db, { code, actor: 'alice', text: 'welcome', record: async (_tx, outcome) => void recorded.push(outcome.kind) });
    expect(await approve(issued.code)).toMatchObject({ kind: 'approved', platform: 'approve-platform', userId: 'u-approve' });
    expect(await isPairedUser(db.client.db, 'approve-platform', 'u-approve')).toBe(true);
    expect(await outboxTexts('u-approve')).toEqual([expect.stringContaining(issued.code), 'welcome']);
    expect(await approve(issued.code)).toEqual({ kind: 'not_found' });
    expect(await approve('ZZZZZZZZ')).toEqual({ kind: 'not_found' });
    expect(await outboxTexts('u-approve')).toHaveLength(2);
    expect(recorded).toEqual(['approved', 'not_found', 'not_found']);

    const denied = await ask('approve-platform', 'u-deny');
    if (denied.kind !== 'issued') throw new Error(`expected a code, got ${denied.kind}`);
    expect(await denyPairing(db.client.db, { code: denied.code, actor: 'alice', record: async () => undefined })).toEqual({ kind: 'denied', platform: 'approve-platform', userId: 'u-deny' });
    expect((await denyPairing(db.client.db, { code: denied.code, actor: 'alice', record: async () => undefined })).kind).toBe('not_found');
    expect(await approve(denied.code)).toEqual({ kind: 'not_found' });
    expect(await ask('approve-platform', 'u-deny')).toEqual({ kind: 'denied' });

    expect((await revokePairedUser(db.client.db, { platform: 'approve-platform', userId: 'u-approve', record: async () => undefined })).kind).toBe('revoked');
    expect(await isPairedUser(db.client.db, 'approve-platform', 'u-approve')).toBe(false);
    expect((await revokePairedUser(db.client.db, { platform: 'approve-platform', userId: 'u-approve', record: async () => undefined })).kind).toBe('not_found');
  });

  it('refuses an expired code and frees its slot for a new one', async () => {
    const issued = await ask('expiry-platform', 'u-late');
    if (issued.kind !== 'issued') throw new Error(`expected a code, got ${issued.kind}`);
    await db.client.db.$client`update pairings set expires_at = now() - interval '1 second' where code = ${issued.code}`;
    const outcome = await approvePairing(db.client.db, { code: issued.code, actor: 'alice', text: 'welcome', record: async () => undefined });
    expect(outcome.kind).toBe('expired');
    expect(await isPairedUser(db.client.db, 'expiry-platform', 'u-late')).toBe(false);
    const again = await ask('expiry-platform', 'u-late');
    expect(again.kind).toBe('issued');
    expect(again.kind === 'issued' && again.code).not.toBe(issued.code);
  });
});
