import { describe, expect, it } from 'vitest';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { createSchedule, getSchedule, listSchedules, loadOccurrenceState, recordOccurrence } from './schedule-store.ts';

const db = useTestDbClient();

async function conversation(chatId: string): Promise<number> {
  const [row] = await db.client.db.$client<{ id: string }[]>`
    insert into conversations (key, platform, account_id, chat_id, thread_id, user_scope)
    values (${`telegram:bot:${chatId}::`}, 'telegram', 'bot', ${chatId}, '', '') returning id`;
  return Number(row?.id);
}

describe('schedule store', () => {
  // On drizzle's client a raw statement can neither send a Date nor read one back (drizzle makes the
  // timestamp types pass-through): a one-off was refused at its insert, before any turn could make it.
  it('keeps a one-off’s time as a Date through create, read and an occurrence recorded once', async () => {
    const conversationId = await conversation('sched-1');
    const runAt = new Date('2030-01-02T03:04:05.678Z');
    const made = await createSchedule(db.client.db, { conversationId, prompt: 'stretch', runAt, cron: null, timeZone: 'UTC', createdBy: 'telegram:bot:u1', maxActive: 5 });
    expect(made.kind).toBe('created');
    const id = made.kind === 'created' ? made.schedule.id : 0;
    const row = await getSchedule(db.client.db, id);
    expect(row?.runAt).toEqual(runAt);
    expect(row?.createdAt).toBeInstanceOf(Date);
    expect((await listSchedules(db.client.db, { conversationId }))[0]?.runAt).toEqual(runAt);
    expect((await loadOccurrenceState(db.client.db, id))?.schedule.runAt).toEqual(runAt);

    await recordOccurrence(db.client.db, { scheduleId: id, occurrenceAt: runAt, outcome: 'ran' });
    await recordOccurrence(db.client.db, { scheduleId: id, occurrenceAt: runAt, outcome: 'ran' });
    const after = await getSchedule(db.client.db, id);
    expect(after).toMatchObject({ status: 'ended', runs: 1, missed: 0, lastOutcome: 'ran', lastOccurrenceAt: runAt });
    expect(after?.endedAt).toBeInstanceOf(Date);
  });

  it('counts a cron’s occurrences once each, in time order, and keeps it active', async () => {
    const conversationId = await conversation('sched-2');
    const made = await createSchedule(db.client.db, { conversationId, prompt: 'daily', runAt: null, cron: '0 9 * * *', timeZone: 'Europe/Paris', createdBy: 'telegram:bot:u2', maxActive: 5 });
    const id = made.kind === 'created' ? made.schedule.id : 0;
    const first = new Date('2030-01-01T08:00:00Z');
    const second = new Date('2030-01-02T08:00:00Z');
    await recordOccurrence(db.client.db, { scheduleId: id, occurrenceAt: first, outcome: 'missed' });
    await recordOccurrence(db.client.db, { scheduleId: id, occurrenceAt: second, outcome: 'ran' });
    // A retried job of the earlier occurrence arrives late: it counts for nothing.
    await recordOccurrence(db.client.db, { scheduleId: id, occurrenceAt: first, outcome: 'ran' });
    expect(await getSchedule(db.client.db, id)).toMatchObject({ status: 'active', runAt: null, runs: 1, missed: 1, lastOutcome: 'ran', lastOccurrenceAt: second, endedAt: null });
  });
});
