import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { storeInboundEvent, type InboundToStore } from './store-inbound.ts';

// Issue 19, order: a store that would land after the platform stopped waiting is refused, not made late.
const db = useTestDbClient({ max: 3 });

const event = (eventId: string, chatId = 'C1'): InboundToStore => ({
  platform: 'slack', accountId: 'T1', eventId, conversationKey: `slack:T1:${chatId}::`, chatId, threadId: '', userScope: '',
  userId: 'U1', text: `line ${eventId}`, replyTarget: { channel: chatId }, refuseAtPending: null,
});

const countEvents = async (eventId: string) => (await db.client.db.$client<{ n: number }[]>`select count(*)::int as n from inbound_events where event_id = ${eventId}`)[0]?.n;

describe('storeInboundEvent with a deadline', () => {
  it('stores before the deadline and refuses after it, storing nothing, not even the conversation', async () => {
    const inTime = await storeInboundEvent(db.client.db, event('Ev1'), { notAfterMs: Date.now() + 5_000 });
    expect(inTime).toMatchObject({ duplicate: false, status: 'pending' });

    expect(await storeInboundEvent(db.client.db, event('Ev2', 'C2'), { notAfterMs: Date.now() - 1 })).toEqual({ tooLate: true });
    expect(await countEvents('Ev2')).toBe(0);
    expect(await db.client.db.$client`select 1 from conversations where chat_id = 'C2'`).toHaveLength(0);
  });

  it('still answers a re-delivery of a stored event as a duplicate after the deadline', async () => {
    const first = await storeInboundEvent(db.client.db, event('Ev3'));
    const again = await storeInboundEvent(db.client.db, event('Ev3'), { notAfterMs: Date.now() - 1 });
    expect(again).toEqual({ ...first, duplicate: true });
  });

  it('judges the deadline when the statement runs, after any lock it waited for', async () => {
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const held = db.client.db.$client.begin(async (tx) => {
      await tx`lock table inbound_events in share row exclusive mode`;
      locked();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    });
    await lockTaken;
    const late = storeInboundEvent(db.client.db, event('Ev4'), { notAfterMs: Date.now() + 500 });
    await held;
    expect(await late).toEqual({ tooLate: true });
    expect(await countEvents('Ev4')).toBe(0);
  });
});

describe('storeInboundEvent and the parsed command', () => {
  it('stores the command ingress parsed, and null for ordinary text or when none is given', async () => {
    await storeInboundEvent(db.client.db, { ...event('Ev5', 'C5'), text: '/stop', command: 'stop' });
    await storeInboundEvent(db.client.db, { ...event('Ev6', 'C5'), command: null });
    await storeInboundEvent(db.client.db, event('Ev7', 'C5'));
    const rows = await db.client.db.$client<{ event_id: string; command: string | null }[]>`
      select event_id, command from inbound_events where event_id in ('Ev5', 'Ev6', 'Ev7') order by event_id`;
    expect(rows).toEqual([
      { event_id: 'Ev5', command: 'stop' },
      { event_id: 'Ev6', command: null },
      { event_id: 'Ev7', command: null },
    ]);
  });
});

describe('storeInboundEvent storeAs done', () => {
  it('stores an approval answer done, never pending, and a re-delivery as its duplicate', async () => {
    const first = await storeInboundEvent(db.client.db, { ...event('Ev8', 'C8'), text: '/approve', command: 'approve', storeAs: 'done' });
    expect(first).toMatchObject({ duplicate: false, status: 'done' });
    expect(await storeInboundEvent(db.client.db, { ...event('Ev8', 'C8'), text: '/approve', command: 'approve', storeAs: 'done' })).toEqual({ ...first, duplicate: true });
  });
});
