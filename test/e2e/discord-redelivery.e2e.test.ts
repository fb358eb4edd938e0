import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordSent, sendDiscordInteraction, sendDiscordMessage, waitForDiscordGateway, type SentDiscordMessage } from '../support/discord.ts';
import { stopWorker } from '../support/restart-helpers.ts';
import { TestSystem } from '../support/system.ts';
import { waitForCondition } from '../support/turn-helpers.ts';

/**
 * Delivery once and in order across a restart (issue 16, defect 8): a worker process that
 * sent an outbox row to Discord but died before marking it sent leaves the
 * row pending; the next worker process sends it again. What that resend
 * does must follow from the row alone (its id gives the nonce, its
 * chunk_index says whether it is the part that answers the user), so it
 * returns the message Discord already made and never posts or overwrites
 * anything. A short DISCORD_MESSAGE_LIMIT makes every reply several rows.
 */

const guildId = '6000000000000000001';
const interactionChannel = '5000000000000000901';
const mentionChannel = '5000000000000000902';

interface OutboxState {
  id: number;
  chunk_index: number;
  status: string;
  platform_message_id: string | null;
}

describe('Discord redelivery after a restart (real worker processes)', () => {
  let system: TestSystem;
  let sim: string;

  beforeAll(async () => {
    system = await TestSystem.start({ discord: true, workerProcesses: true, workerEnv: { DISCORD_MESSAGE_LIMIT: '80', SWEEP_INTERVAL_MS: '300' } });
    sim = system.simUrl;
    await waitForDiscordGateway(sim, { identifies: 1, connected: true });
    await system.setModelScript({ rules: [{ match: 'long answer', replyRepeat: { text: 'lorem ipsum dolor sit amet ', count: 8 } }] });
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  const outboxOf = (channelId: string) =>
    system.sql<OutboxState[]>`
      select o.id::int as id, o.chunk_index, o.status, o.platform_message_id
      from outbox o join conversations c on c.id = o.conversation_id
      where c.platform = 'discord' and c.chat_id = ${channelId} order by o.id`;

  const allSent = async (channelId: string, what: string): Promise<OutboxState[]> => {
    let rows: OutboxState[] = [];
    await waitForCondition(what, async () => {
      rows = await outboxOf(channelId);
      return rows.length > 0 && rows.every((r) => r.status === 'sent');
    });
    return rows;
  };

  it('sends a row again from a fresh worker process without a second message or an overwritten answer', { timeout: 90_000 }, async () => {
    // A slash command answers through the interaction: part 0 edits the deferred response, later parts go to the channel.
    const interaction = await sendDiscordInteraction(sim, { name: 'help', channelId: interactionChannel, guildId });
    expect(interaction.status).toBe(200);
    // A mention in a guild: part 0 replies to the user's message, later parts do not.
    const mention = await sendDiscordMessage(sim, { channelId: mentionChannel, guildId, mentionsBot: true, content: 'a long answer please' });
    const helpRows = await allSent(interactionChannel, '/help delivered');
    const answerRows = await allSent(mentionChannel, 'long answer delivered');
    expect(helpRows.length).toBeGreaterThanOrEqual(3);
    expect(answerRows.length).toBeGreaterThanOrEqual(3);
    const helpBefore = await discordSent(sim, interactionChannel);
    const answerBefore = await discordSent(sim, mentionChannel);
    expect(helpBefore).toHaveLength(helpRows.length);
    expect(helpBefore[0]).toMatchObject({ original: true, interaction_id: interaction.interaction.id });
    expect(answerBefore.map((m) => m.message_reference?.message_id)).toEqual(answerRows.map((r) => (r.chunk_index === 0 ? mention.messageId : undefined)));

    // The worker dies after Discord made these messages and before the rows were marked: as far as Postgres knows, they were never sent.
    const stopped = await stopWorker(system, 'SIGKILL');
    expect(stopped.signalCode).toBe('SIGKILL');
    const resent = [helpRows.at(-1) as OutboxState, answerRows[0] as OutboxState, answerRows.at(-1) as OutboxState];
    const resentIds = resent.map((r) => r.id);
    await system.sql`
      update outbox set status = 'pending', sent_at = null, platform_message_id = null, next_attempt_at = now() - interval '1 minute'
      where id = any(${resentIds}::bigint[])`;
    await system.addWorker(true);

    const helpAfterRows = await allSent(interactionChannel, '/help parts sent again');
    const answerAfterRows = await allSent(mentionChannel, 'answer parts sent again');
    // Discord answered each resend with the message it had made the first time.
    expect(helpAfterRows).toEqual(helpRows);
    expect(answerAfterRows).toEqual(answerRows);
    const unchanged = (messages: SentDiscordMessage[]) => messages.map((m) => ({ id: m.id, content: m.content, edits: m.edits, reply: m.message_reference?.message_id }));
    expect(unchanged(await discordSent(sim, interactionChannel))).toEqual(unchanged(helpBefore));
    expect(unchanged(await discordSent(sim, mentionChannel))).toEqual(unchanged(answerBefore));
  });
});
