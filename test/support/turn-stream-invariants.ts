import { streamCursor } from '@switchboard/core';
import type { ChatSnapshot, ShownMessage } from './turn-helpers.ts';

/**
 * (n) Streamed replies (docs/turns.md "Streaming replies"): every reply
 * delivered into a message that grew by edits ends, on the platform, as
 * exactly the committed reply, and nothing edits that message once the
 * reply was delivered (a superseded turn's stream must not overwrite it).
 * The simulator records each edit with its time; the outbox row records
 * when delivery finished (`sent_at`, written after the platform answered),
 * so an edit later than that came from something other than the delivery.
 * And no message is left growing: once the conversation is idle, a text
 * still ending in the stream's cursor is a partial answer a stale holder
 * posted or edited that no committed reply ever finished. The one exception
 * is the documented limit check (f) counts: with a SIGKILL in the batch, a
 * first post whose id the killed worker never recorded (never edited, on no
 * outbox row).
 */
export function checkStreamedReplies(snapshot: ChatSnapshot, shown: ShownMessage[], options: { kills: boolean } = { kills: false }): string[] {
  const problems: string[] = [];
  for (const row of snapshot.outbox) {
    if (!row.streamed || row.status !== 'sent' || !row.platform_message_id) continue;
    const message = shown.find((m) => String(m.message_id) === row.platform_message_id);
    if (!message) {
      problems.push(`streamed reply (outbox ${row.id}) was delivered into message ${row.platform_message_id}, which the platform never showed`);
      continue;
    }
    if (message.text.trim() !== row.text.trim()) {
      problems.push(`streamed reply (outbox ${row.id}) ends as ${JSON.stringify(message.text.slice(-60))}, not the committed ${JSON.stringify(row.text.slice(-60))}`);
    }
    const sentAt = row.sent_at ? new Date(row.sent_at).getTime() : undefined;
    const late = sentAt === undefined ? [] : (message.edits ?? []).filter((e) => e.editedAt > sentAt);
    if (late.length > 0) {
      problems.push(`streamed reply (outbox ${row.id}) was edited ${late.length} time(s) after its delivery, last to ${JSON.stringify(late.at(-1)!.text.slice(-60))}`);
    }
  }
  const onRows = new Set(snapshot.outbox.map((row) => row.platform_message_id).filter((id) => id !== null));
  for (const message of shown) {
    const unrecorded = options.kills && (message.edits ?? []).length === 0 && !onRows.has(String(message.message_id));
    if (message.text.endsWith(streamCursor) && !unrecorded) problems.push(`message ${message.message_id} was left growing: ${JSON.stringify(message.text.slice(-60))}`);
  }
  return problems;
}
