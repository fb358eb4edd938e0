import { describe, expect, it } from 'vitest';
import { approvalAskedOf } from './triggered-turns.ts';
import { checkScheduleSpec, decideOccurrence, formatScheduleList, nextCronTimes, scheduleEventId, scheduleUserId } from './schedules.ts';

const now = new Date('2026-11-29T08:00:00Z');

describe('schedule specs', () => {
  it('takes a one-off in the future with an offset', () => {
    const check = checkScheduleSpec({ prompt: ' Remind me to stretch ', at: '2026-11-29T10:30:00+01:00' }, now);
    expect(check).toEqual({ ok: true, schedule: { kind: 'once', prompt: 'Remind me to stretch', runAt: new Date('2026-11-29T09:30:00Z'), timeZone: 'UTC' } });
  });

  it('takes a cron in a time zone and says when it next runs', () => {
    const check = checkScheduleSpec({ prompt: 'standup', cron: '0 9 * * 1-5', timeZone: 'Europe/Berlin' }, now);
    // 2026-11-29 is a Sunday: next is Monday 09:00 in Berlin, 08:00 UTC.
    expect(check.ok && check.schedule.kind === 'cron' ? check.schedule.nextAt.toISOString() : check).toBe('2026-11-30T08:00:00.000Z');
  });

  it.each([
    [{ prompt: '', at: '2026-11-30T00:00:00Z' }, 'prompt must not be empty'],
    [{ prompt: 'x'.repeat(4001), at: '2026-11-30T00:00:00Z' }, 'at most 4000'],
    [{ prompt: 'x' }, 'exactly one of at'],
    [{ prompt: 'x', at: '2026-11-30T00:00:00Z', cron: '* * * * *' }, 'exactly one of at'],
    [{ prompt: 'x', at: 'tomorrow' }, 'ISO 8601'],
    [{ prompt: 'x', at: '2026-11-30T00:00:00' }, 'ISO 8601'],
    [{ prompt: 'x', at: '2026-11-28T00:00:00Z' }, 'not in the future'],
    [{ prompt: 'x', at: '2028-11-28T00:00:00Z' }, 'within a year'],
    [{ prompt: 'x', at: '2027-02-30T09:00:00Z' }, 'ISO 8601'],
    [{ prompt: 'x', at: '2027-01-10T24:00:00Z' }, 'ISO 8601'],
    [{ prompt: 'x', at: '2027-01-10T09:60:00Z' }, 'ISO 8601'],
    [{ prompt: 'x', cron: '0 0 31 4,6,9,11 *' }, 'never fires within two years'],
    [{ prompt: 'x', cron: 'every day' }, 'five fields'],
    [{ prompt: 'x', cron: '*/10 * * * * *' }, 'five fields'],
    [{ prompt: 'x', cron: '61 * * * *' }, 'not a valid cron'],
    [{ prompt: 'x', cron: '0 9 * * *', timeZone: 'Mars/Olympus' }, 'not an IANA time zone'],
    [{ prompt: 'x', cron: '0 9 31 2 *' }, 'not a valid cron'],
  ])('refuses %j with a line saying why', (spec, message) => {
    const check = checkScheduleSpec(spec, now);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.message).toContain(message);
  });

  it('takes a leap day and a yearly cron in a far time zone', () => {
    expect(checkScheduleSpec({ prompt: 'x', at: '2027-02-28T23:59:59+14:00' }, now).ok).toBe(true);
    expect(checkScheduleSpec({ prompt: 'x', cron: '0 0 29 2 *' }, now).ok).toBe(true);
    expect(checkScheduleSpec({ prompt: 'x', cron: '59 23 31 12 *', timeZone: 'Pacific/Kiritimati' }, now).ok).toBe(true);
  });

  it('takes a cron that fires once a minute, the floor', () => {
    expect(checkScheduleSpec({ prompt: 'x', cron: '* * * * *' }, now).ok).toBe(true);
  });

  it('keeps a cron on its wall-clock time across a daylight-saving change in its zone', () => {
    const times = nextCronTimes({ cron: '0 9 * * *', timeZone: 'America/New_York', after: new Date('2026-10-31T12:00:00Z'), count: 2 });
    expect(times?.map((t) => t.toISOString())).toEqual(['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z']);
  });
});

describe('occurrences', () => {
  const base = { scheduleStatus: 'active' as const, conversationStatus: 'active' as const, occurrenceAt: now, now, catchUpMs: 3_600_000 };
  it('runs an on-time occurrence, misses one later than the window, pauses in a suspended conversation, drops an ended one', () => {
    expect(decideOccurrence(base)).toBe('run');
    expect(decideOccurrence({ ...base, now: new Date(now.getTime() + 3_600_000) })).toBe('run');
    expect(decideOccurrence({ ...base, now: new Date(now.getTime() + 3_600_001) })).toBe('missed');
    expect(decideOccurrence({ ...base, conversationStatus: 'suspended' })).toBe('paused');
    expect(decideOccurrence({ ...base, scheduleStatus: 'cancelled' })).toBe('drop');
    expect(decideOccurrence({ ...base, scheduleStatus: null })).toBe('drop');
    expect(decideOccurrence({ ...base, conversationStatus: null })).toBe('drop');
  });

  it('keys an occurrence by schedule and time, and its turn by a user no person can be', () => {
    expect(scheduleEventId(7, now)).toBe(`schedule:7:${now.getTime()}`);
    expect(scheduleUserId(7)).toBe('schedule:7');
    expect(approvalAskedOf('telegram:bot:schedule:7', scheduleUserId(7))).toBeNull();
    expect(approvalAskedOf('telegram:bot:42', '42')).toBe('telegram:bot:42');
  });

  it('lists schedules for chat, one line each', () => {
    expect(formatScheduleList([])).toBe('No schedules in this conversation.');
    const text = formatScheduleList([
      { id: 3, prompt: 'water the plants', runAt: null, cron: '0 8 * * *', timeZone: 'Europe/Paris' },
      { id: 4, prompt: 'call mum', runAt: new Date('2026-12-01T18:00:00Z'), cron: null, timeZone: 'UTC' },
    ]);
    expect(text.split('\n')).toEqual([
      'Schedules in this conversation (cancel with /schedules cancel <id>):',
      '#3 cron "0 8 * * *" (Europe/Paris): water the plants',
      '#4 once at 2026-12-01T18:00:00.000Z: call mum',
    ]);
  });
});
