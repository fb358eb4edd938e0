import { describe, expect, it } from 'vitest';
import { checkUserLines } from './store-checks.ts';

const at = (ms: number) => new Date(1_700_000_000_000 + ms);
const user = (conversation_id: number, session_id: number, inbound_event_id: number) => ({ conversation_id, session_id, inbound_event_id, created_at: at(inbound_event_id) });
const event = (conversation_id: number, id: number, status = 'done') => ({ conversation_id, id, status });

describe(checkUserLines.name, () => {
  it('passes one stored message per accepted event, in order, and ignores refused events', () => {
    expect(checkUserLines([user(1, 10, 1), user(1, 10, 2)], [event(1, 1), event(1, 2), event(1, 3, 'refused')])).toEqual([]);
  });

  it('counts a compression copy in a child session once', () => {
    expect(checkUserLines([user(1, 10, 1), user(1, 10, 2), user(1, 11, 2), user(1, 11, 3)], [event(1, 1), event(1, 2), event(1, 3)])).toEqual([]);
  });

  it('fails a line stored twice in one session, a missing line and a reordered pair', () => {
    expect(checkUserLines([user(1, 10, 1), user(1, 10, 1)], [event(1, 1)])[0]).toMatch(/1 stored twice \[1\], 0 missing/);
    expect(checkUserLines([user(2, 20, 5)], [event(2, 5), event(2, 6)])[0]).toMatch(/0 stored twice \[\], 1 missing \[6\]/);
    expect(checkUserLines([user(3, 30, 8), user(3, 30, 7)], [event(3, 7), event(3, 8)])[0]).toMatch(/out of order/);
  });
});
