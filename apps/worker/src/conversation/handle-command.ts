import { approvalReplies, busyInputModes, splitMessage, type StoredCommand } from '@switchboard/core';
import { replyToSchedules } from '../schedules/schedules-command.ts';
import { commitTurn, ensureCurrentSession, loadSession, wasToldRecently, type ConversationRow, type InboundEventRow, type OutboxButton, type OutboxRow } from '@switchboard/db';
import { compressConversation, type CompressionOutcome } from '../compression/compress-session.ts';
import type { WorkerContext } from '../worker-context.ts';

export const helpText = [
  'Commands:',
  '/new or /reset: start a fresh session',
  '/stop: stop what I am doing',
  '/status: session, message count, token estimate, busy mode',
  `/busy <${busyInputModes.join('|')}>: what happens when you write while I am working`,
  '/compact: summarise older messages now',
  '/approve, /approve session, /deny: answer a question I asked before running something',
  '/schedules: what is scheduled here; /schedules cancel <id> ends one',
  '/help: this list',
  'In Slack threads, use ! instead of / (for example !stop).',
].join('\n');

const compactReplies: Record<CompressionOutcome, (n: number) => string> = {
  compressed: (n) => `Done: ${n} older messages are now a summary.`,
  not_needed: () => 'Nothing to compress yet: the conversation is short.',
  nothing_to_gain: () => 'Nothing to do: the conversation was just compressed, and too little is new since to summarise again.',
  superseded: () => 'Nothing to do: the conversation was compressed or reset since you asked.',
  locked: () => 'A compression is already running; it will be done in a moment.',
  rotated: () => 'The conversation was just compressed.',
  stale: () => 'New messages arrived while I summarised; the conversation goes on uncompressed. Try again in a moment.',
  failed: () => 'Compression failed this time; the conversation goes on uncompressed. Try again later.',
  blocked: () => 'Compression is paused for this conversation.',
  backoff: () => 'Compression will be retried shortly.',
  interrupted: () => 'Compression was interrupted.',
};

const busyModeHelp: Record<string, string> = {
  interrupt: 'a new message stops my current answer and I answer the new one',
  queue: 'new messages wait and each gets its own answer, in order',
  collect: 'messages sent while I work are answered together afterwards',
  steer: 'new messages are added to the answer I am working on',
};

/** A `/stop` that stopped nothing says so at most once in this many seconds per conversation. */
const nothingRunningQuietSeconds = 60;

/**
 * What a /stop says. Whether it cancelled a turn is decided once, by the
 * ActiveTurn reducer (`cancellingStopOf`), and recorded by that turn's fenced
 * commit on the /stop's row (`turn_id`, commitTurn's `stoppedByEventId`); a
 * /stop that cancelled another worker's turn (which was then stopped, killed
 * or lost the conversation) carries that turn's id the same way. The reply
 * reads only the row, so whichever worker answers the /stop says the same.
 */
export function replyToStop(event: Pick<InboundEventRow, 'turnId'>): string {
  return event.turnId !== null ? 'Stopped.' : 'Nothing was running.';
}

/** A command the work loop took: its conversation, its event, the command as stored, and the holding's claim. */
export interface TakenCommand {
  conversation: ConversationRow;
  event: InboundEventRow;
  command: StoredCommand | null;
  claimId: string;
}

/**
 * Runs a chat command (docs/turns.md, "Busy input modes") in arrival order
 * with the messages around it, and replies through the outbox; returns the
 * rows waiting to be delivered. `command` is the event's, as the work loop
 * read it from the stored column (null: not a command any more, answered
 * with the help text); the text is not parsed here.
 * `claimId`: the lease holding that delivers the reply (its rows are committed claimed by it).
 */
export async function handleCommand(ctx: WorkerContext, taken: TakenCommand): Promise<OutboxRow[]> {
  const { conversation, event, claimId } = taken;
  const { reply, quiet, buttons } = await replyToCommand(ctx, taken);
  const sender = ctx.senders.get(conversation.platform);
  const committed = await commitTurn(ctx.db, {
    conversationId: conversation.id,
    sessionId: conversation.currentSessionId ?? 0,
    status: 'completed',
    inboundEventIds: [event.id],
    messages: [],
    replies:
      sender && !quiet
        ? [{ platform: conversation.platform, target: event.replyTarget, chunks: splitMessage(reply, sender.messageLimit, sender.fitsOneMessage?.bind(sender)), ...(buttons ? { buttons } : {}) }]
        : [],
    claimFor: claimId,
  });
  // Fenced like a turn: a worker that lost the conversation sends no reply for input someone else took.
  return committed.kind === 'committed' ? committed.outbox : [];
}

/** What a command does, and what it says (`quiet`: nothing, this time; `buttons`: under its last part). */
async function replyToCommand(ctx: WorkerContext, taken: TakenCommand): Promise<{ reply: string; quiet: boolean; buttons?: OutboxButton[] }> {
  const { conversation, event, command } = taken;
  const mode = conversation.busyMode ?? ctx.config.BUSY_INPUT_MODE;
  let reply: string;
  let quiet = false;
  switch (command?.name) {
    case 'stop':
      reply = replyToStop(event);
      // "Nothing was running." at most once a minute per conversation (issue 30, finding 5; docs/security.md).
      quiet = event.turnId === null && (await wasToldRecently(ctx.db, { conversationId: conversation.id, text: reply, seconds: nothingRunningQuietSeconds }));
      break;
    case 'busy':
      if (command.mode) {
        // Once per event: a holding that lost the lease and runs this command again changes nothing (issue 29, defect 8).
        await ctx.actions.setBusyMode(conversation.id, command.mode, { kind: 'chat', inboundEventId: event.id });
        reply = `Busy mode is now ${command.mode}: ${busyModeHelp[command.mode]}.`;
      } else {
        reply = `Busy mode is ${mode}: ${busyModeHelp[mode]}. Choose one of: ${busyInputModes.join(', ')}.`;
      }
      break;
    case 'new':
    case 'reset': {
      // Announced by the action, as an operator's reset is (packages/actions).
      await ctx.actions.reset(conversation.id, command.name, { kind: 'chat', inboundEventId: event.id });
      reply = 'Started a fresh session. Earlier messages are no longer part of our conversation.';
      break;
    }
    case 'status': {
      const sessionId = await ensureAnnouncedSession(ctx, conversation);
      const session = await loadSession(ctx.db, sessionId);
      const compressed = conversation.lastCompressedAt ? conversation.lastCompressedAt.toISOString() : 'never';
      reply = [
        `Session ${sessionId}: ${session?.messageCount ?? 0} messages, about ${session?.tokenEstimate ?? 0} tokens.`,
        `Busy mode: ${mode}. Last compressed: ${compressed}.`,
        'Nothing else is running: commands are handled in order, after the message before them.',
      ].join('\n');
      break;
    }
    case 'compact': {
      // Meant for the session this command was read with: one that moved on since makes it a no-op.
      const expectedSessionId = conversation.currentSessionId ?? undefined;
      const result = await compressConversation(ctx, conversation.id, { force: true, expectedSessionId });
      reply = compactReplies[result.outcome](result.summarisedMessages ?? 0);
      break;
    }
    case 'schedules': {
      const answer = await replyToSchedules(ctx.schedules.deps, { conversationId: conversation.id, action: command.action });
      return { reply: answer.text, quiet: false, ...(answer.buttons ? { buttons: answer.buttons } : {}) };
    }
    case 'approve':
    case 'deny':
      // Answers are decided at ingress and stored done (docs/codex.md, "Approvals in chat"); one that reaches a worker found no question then.
      reply = approvalReplies.nothingPending;
      break;
    default:
      // `help`, and text that is no longer a command (unknown words go to the model): the list never hurts.
      reply = helpText;
  }
  return { reply, quiet };
}

/**
 * `/status` can be a conversation's first message and so start its first
 * session (or the first one after a suspension): announced with
 * `session.started` like one a turn starts (docs/restarts.md, "Lifecycle events"). Only the lease
 * holder runs commands, so no one else creates it meanwhile.
 */
async function ensureAnnouncedSession(ctx: WorkerContext, conversation: ConversationRow): Promise<number> {
  const sessionId = await ensureCurrentSession(ctx.db, conversation);
  if (conversation.currentSessionId === null) await ctx.emit({ type: 'session.started', conversationId: conversation.id, sessionId });
  return sessionId;
}
