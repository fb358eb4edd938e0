import { and, eq } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { inboundEvents, type StoredAttachment } from '../schema/inbound-events.ts';

/**
 * Writes an inbound event's attachment references back with the sha256 of
 * the bytes the worker fetched (docs/media.md): the record of what the model
 * was given, without keeping the bytes. Only while the event is still pending
 * (the turn that fetched them has not committed), so a late write never
 * touches an event a later holder already settled.
 */
export async function recordAttachmentHashes(db: Database, inboundEventId: number, attachments: readonly StoredAttachment[]): Promise<void> {
  await db
    .update(inboundEvents)
    .set({ attachments: [...attachments] })
    .where(and(eq(inboundEvents.id, inboundEventId), eq(inboundEvents.status, 'pending')));
}
