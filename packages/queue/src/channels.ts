import { isCluster, type RedisClient } from './redis-connection.ts';

/**
 * Pub/sub on one Redis or on a cluster. On a cluster a channel is sharded
 * (SPUBLISH / SSUBSCRIBE, Redis 7): a message goes to the shard that owns
 * the channel's slot and its subscribers, instead of over the cluster bus to
 * every node. One exception, publishSignal: its PUBLISH runs inside a script
 * gated on the conversation's lease key, and a script may touch only its own
 * slot, so those signals stay classic (docs/services.md, "Redis Cluster").
 */
export async function publishTo(client: RedisClient, channel: string, message: string): Promise<number> {
  return Number(isCluster(client) ? await client.spublish(channel, message) : await client.publish(channel, message));
}

/** Calls `onMessage` with each message on `channel`; resolves once subscribed. */
export async function listenTo(client: RedisClient, channel: string, onMessage: (raw: string) => void): Promise<void> {
  onChannelMessage(client, channel, onMessage);
  await subscribeTo(client, channel);
}

/** Subscribes without a handler (the caller listens with onChannelMessage). */
export async function subscribeTo(client: RedisClient, channel: string): Promise<void> {
  await (isCluster(client) ? client.ssubscribe(channel) : client.subscribe(channel));
}

export async function unsubscribeFrom(client: RedisClient, channel: string): Promise<void> {
  await (isCluster(client) ? client.sunsubscribe(channel) : client.unsubscribe(channel));
}

/** The event a subscribed client emits for `channel`'s messages: `smessage` on a cluster. */
export function onChannelMessage(client: RedisClient, channel: string, onMessage: (raw: string) => void): void {
  client.on(isCluster(client) ? 'smessage' : 'message', (from: string, raw: string) => {
    if (from === channel) onMessage(raw);
  });
}
