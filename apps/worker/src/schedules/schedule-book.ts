import { endSchedule, listActiveSchedules, makeSchedule, type ScheduleDeps } from '@switchboard/actions';
import type { BookingResult, ScheduleBook } from '@switchboard/agent';

/**
 * The `schedule` tool's book: the schedule door of packages/actions, acting
 * for the turn's conversation and user only (a tool call can reach no other
 * conversation's schedules), each user held to USER_MAX_SCHEDULES.
 */
export function createScheduleBook(deps: ScheduleDeps, maxPerUser: number): ScheduleBook {
  return {
    async create(caller, request): Promise<BookingResult> {
      const { originKey, ...spec } = request;
      const outcome = await makeSchedule(deps, { conversationId: caller.conversationId, spec, createdBy: caller.userKey, maxActive: maxPerUser, originKey });
      switch (outcome.kind) {
        case 'created':
        case 'existing':
          return { ok: true, schedule: outcome.schedule, existing: outcome.kind === 'existing' };
        case 'invalid':
          return { ok: false, code: outcome.code, message: outcome.message };
        case 'over_limit':
          return { ok: false, code: outcome.code, message: `the user already has ${outcome.limit} active schedules (USER_MAX_SCHEDULES); cancel one first` };
        case 'not_found':
          return { ok: false, code: outcome.code, message: 'this conversation no longer exists' };
      }
    },
    list: (caller) => listActiveSchedules(deps, caller.conversationId),
    cancel: async (caller, id) => (await endSchedule(deps, { id, conversationId: caller.conversationId })).kind === 'cancelled',
  };
}
