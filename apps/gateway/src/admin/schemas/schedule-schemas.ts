import { Type, type Static } from '@fastify/type-provider-typebox';
import { schedulePromptMaxChars } from '@switchboard/core';
import type { ScheduleRow } from '@switchboard/db';
import { NullableString, NullableTimestamp, RowId, Timestamp, toIso } from './common-schemas.ts';

/**
 * POST /admin/schedules (docs/admin.md, "Schedules"). The schema checks
 * shapes and bounds only; whether the time, cron and time zone can run is
 * packages/core's checkScheduleSpec, the same rule the `schedule` tool meets
 * (400 SCHEDULE_INVALID). The prompt's own bound is that rule's too: it
 * counts the prompt once cleaned, which a schema cannot.
 */
export const ScheduleBody = Type.Object(
  {
    conversationId: RowId({ description: 'The conversation the schedule belongs to and runs its turns in' }),
    prompt: Type.String({ description: `What the agent is told at each occurrence, as if the user had written it (at most ${schedulePromptMaxChars} characters once trimmed)` }),
    at: Type.Optional(Type.String({ maxLength: 64, description: 'Once, at this ISO 8601 time with an offset or Z (e.g. 2026-12-01T09:00:00Z); within a year' })),
    cron: Type.Optional(Type.String({ maxLength: 200, description: 'At every match of this five-field cron expression (minute hour day month weekday); at most once a minute' })),
    timeZone: Type.Optional(Type.String({ maxLength: 64, description: 'The IANA time zone the cron is read in (default UTC)' })),
  },
  { additionalProperties: false },
);

export const ScheduleListQuery = Type.Object(
  {
    conversationId: Type.Optional(RowId({ description: "Only this conversation's schedules" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
  },
  { additionalProperties: false },
);

export const ScheduleView = Type.Object({
  id: Type.Integer(),
  conversationId: Type.Integer(),
  prompt: Type.String(),
  runAt: Type.Union([Timestamp, Type.Null()], { description: "A one-off's time; null for a cron schedule" }),
  cron: NullableString,
  timeZone: Type.String(),
  status: Type.Enum(['active', 'ended', 'cancelled'], { description: 'ended: a one-off that had its time; cancelled: by the agent, a chat user or an operator' }),
  createdBy: Type.String({ description: 'A chat user (platform:account:user) or admin:<token name>' }),
  createdAt: Timestamp,
  endedAt: NullableTimestamp,
  lastOccurrenceAt: NullableTimestamp,
  lastOutcome: Type.Union([Type.Enum(['ran', 'missed', 'paused']), Type.Null()]),
  runs: Type.Integer(),
  missed: Type.Integer(),
});

export const ScheduleList = Type.Object({ items: Type.Array(ScheduleView) });
export const ScheduleResult = Type.Object({ ok: Type.Literal(true), schedule: ScheduleView });

export function viewSchedule(row: ScheduleRow): Static<typeof ScheduleView> {
  return {
    ...row,
    runAt: toIso(row.runAt),
    createdAt: toIso(row.createdAt),
    endedAt: toIso(row.endedAt),
    lastOccurrenceAt: toIso(row.lastOccurrenceAt),
  };
}
