import { formatScheduleList, scheduleCancelPayload, type SchedulesAction } from '@switchboard/core';
import type { OutboxButton } from '@switchboard/db';
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
export async function replyToSchedules(deps: ScheduleDeps, request: { conversationId: number; action: SchedulesAction }): Promise<SchedulesReply> {
  const { conversationId, action } = request;
  if (action.kind === 'usage') return { text: schedulesUsage };
  if (action.kind === 'cancel') {
    const outcome = await endSchedule(deps, { id: action.id, conversationId });
    return { text: outcome.kind === 'cancelled' ? `Schedule #${action.id} cancelled.` : noSuchSchedule(action.id) };
  }
  const rows = await listActiveSchedules(deps, conversationId);
  const text = formatScheduleList(rows.map(({ id, prompt, runAt, cron, timeZone }) => ({ id, prompt, runAt, cron, timeZone })));
  // A press is the typed cancel, checked against the conversation it was pressed in; the first 25 get a button (Slack's and Discord's most).
  const buttons = rows.slice(0, maxCancelButtons).map(({ id }): OutboxButton => ({ label: `Cancel #${id}`, payload: scheduleCancelPayload(id), style: 'danger' }));
  return buttons.length > 0 ? { text, buttons } : { text };
}

/** The reply, and under a list one Cancel button per schedule. */
export interface SchedulesReply {
  text: string;
  buttons?: OutboxButton[];
}

/** Slack takes at most 25 elements in an actions block, Discord 25 buttons a message. */
const maxCancelButtons = 25;
