import { describe, expect, it } from 'vitest';
import type { StoredAttachment } from '../schema/inbound-events.ts';
import { useTestDbClient } from '../testing/test-db-client.ts';
import { recordAttachmentHashes } from './attachment-store.ts';
import { storeInboundEvent, type InboundToStore } from './store-inbound.ts';

const db = useTestDbClient({ max: 2 });

const photo: StoredAttachment = { kind: 'image', ref: 'file-1', mime: 'image/jpeg', name: 'photo.jpg', size: 120 };
const event = (eventId: string, attachments?: StoredAttachment[]): InboundToStore => ({
  platform: 'telegram', accountId: 'B1', eventId, conversationKey: 'telegram:B1:42::', chatId: '42', threadId: '', userScope: '',
  userId: '42', text: '', replyTarget: { chatId: 42 }, refuseAtPending: null, ...(attachments ? { attachments } : {}),
});

const attachmentsOf = async (id: number) => (await db.client.db.$client<{ attachments: StoredAttachment[] | null }[]>`select attachments from inbound_events where id = ${id}`)[0]?.attachments;

describe(recordAttachmentHashes.name, () => {
  it('stores references with the event (null without files) and adds the hash while the event is pending', async () => {
    const stored = await storeInboundEvent(db.client.db, event('u1', [photo]));
    const plain = await storeInboundEvent(db.client.db, event('u2'));
    expect(await attachmentsOf(stored.inboundEventId)).toEqual([photo]);
    expect(await attachmentsOf(plain.inboundEventId)).toBeNull();

    const hashed = { ...photo, sha256: 'ab'.repeat(32) };
    await recordAttachmentHashes(db.client.db, stored.inboundEventId, [hashed]);
    expect(await attachmentsOf(stored.inboundEventId)).toEqual([hashed]);
  });

  it('leaves an event another turn already settled untouched', async () => {
    const stored = await storeInboundEvent(db.client.db, event('u3', [photo]));
    await db.client.db.$client`update inbound_events set status = 'done' where id = ${stored.inboundEventId}`;
    await recordAttachmentHashes(db.client.db, stored.inboundEventId, [{ ...photo, sha256: 'cd'.repeat(32) }]);
    expect(await attachmentsOf(stored.inboundEventId)).toEqual([photo]);
  });
});
