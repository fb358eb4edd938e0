import { formatScheduleList, type SchedulesAction } from '@switchboard/core';
import { endSchedule, listActiveSchedules, type ScheduleDeps } from '@switchboard/actions';

/** What `/schedules` with arguments it cannot read says. */
export const schedulesUsage = 'Use /schedules to list what is scheduled here, or /schedules cancel <id> to end one.';

/** The line for a cancel that found nothing to cancel: never an active schedule of this conversation, or already ended. */
export function noSuchSchedule(id: number): string {
  return `There is no active schedule #${id} in this conversation.`;
}

/**
 * `/schedules` in chat (docs/schedules.md, "In chat"), through the same doors
 * as the `schedule` tool and the admin routes: the list of this
 * conversation's active schedules, or one of them cancelled. A cancel names
 * the conversation it was typed (or pressed) in, so an id of another
 * conversation's schedule changes nothing and reads as not found.
 */
export async function replyToSchedules(deps: ScheduleDeps, request: { conversationId: number; action: SchedulesAction }): Promise<string> {
  const { conversationId, action } = request;
  if (action.kind === 'usage') return schedulesUsage;
  if (action.kind === 'cancel') {
    const outcome = await endSchedule(deps, { id: action.id, conversationId });
    return outcome.kind === 'cancelled' ? `Schedule #${action.id} cancelled.` : noSuchSchedule(action.id);
  }
  const rows = await listActiveSchedules(deps, conversationId);
  return formatScheduleList(rows.map(({ id, prompt, runAt, cron, timeZone }) => ({ id, prompt, runAt, cron, timeZone })));
}
