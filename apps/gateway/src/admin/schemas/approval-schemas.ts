import { Type, type Static } from '@fastify/type-provider-typebox';
import { approvalStatuses, type ApprovalRow } from '@switchboard/db';
import { NullableString, NullableTimestamp, Timestamp, toIso } from './common-schemas.ts';

/** A question a runtime put to the chat user and what became of it (docs/codex.md, "Approvals in chat"). */
export const ApprovalView = Type.Object({
  id: Type.Integer(),
  turnId: Type.Integer(),
  kind: Type.Enum(['command', 'file_change', 'other']),
  summary: Type.String(),
  detail: NullableString,
  /** `platform:account:user` of the user whose message started the turn. */
  askedOfUserKey: NullableString,
  status: Type.Enum([...approvalStatuses]),
  decidedByUserKey: NullableString,
  /** button, text, timeout, cancelled, not_asked, auto, superseded */
  decidedVia: NullableString,
  askedAt: Timestamp,
  expiresAt: Timestamp,
  decidedAt: NullableTimestamp,
});

export const ApprovalList = Type.Object({ conversationId: Type.Integer(), approvals: Type.Array(ApprovalView) });

export function viewApproval(row: ApprovalRow): Static<typeof ApprovalView> {
  return {
    id: row.id,
    turnId: row.turnId,
    kind: row.kind,
    summary: row.summary,
    detail: row.detail,
    askedOfUserKey: row.askedOfUserKey,
    status: row.status,
    decidedByUserKey: row.decidedByUserKey,
    decidedVia: row.decidedVia,
    askedAt: toIso(row.askedAt),
    expiresAt: toIso(row.expiresAt),
    decidedAt: toIso(row.decidedAt),
  };
}
