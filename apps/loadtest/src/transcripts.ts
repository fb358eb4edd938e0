import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { repoRoot } from '@switchboard/harness';

/** The corpus lives beside the repository, not in it (CDLA-Sharing; its licence file sits next to it). */
export const defaultTranscriptPath = join(repoRoot, '..', 'shared', 'data', 'transcripts', 'topical-chat-valid_freq.json');

export interface ScriptedTurn {
  /** What the human sends; starts with the turn's tag, so it is unique in the whole run. */
  human: string;
  /** What the scripted model answers, with the same tag, so a reply names its turn. */
  reply: string;
}

export interface ScriptedConversation {
  /** Position in the transcript file; part of every tag. */
  index: number;
  sourceId: string;
  turns: ScriptedTurn[];
}

const transcriptFileSchema = z.record(
  z.object({
    content: z.array(z.object({ message: z.string(), agent: z.string() }).passthrough()),
  }).passthrough(),
);

/** `[c12.3]`: conversation 12 of the file, turn 3. Short, and never a bot command (no leading '/'). */
export function formatTurnTag(conversationIndex: number, turn: number): string {
  return `[c${conversationIndex}.${turn}]`;
}

const tagPattern = /^\[c(\d+)\.(\d+)\]/;

/** Reads a reply's tag back; undefined for text the load test never scripted. */
export function parseTurnTag(text: string): { conversationIndex: number; turn: number } | undefined {
  const match = tagPattern.exec(text);
  if (!match) return undefined;
  return { conversationIndex: Number(match[1]), turn: Number(match[2]) };
}

/**
 * Loads a Topical-Chat style file (see shared/data/transcripts/README.md) and
 * turns each conversation into (human line, recorded reply) pairs: agent_1 is
 * the human, agent_2 the bot. Consecutive lines of one agent are joined,
 * lines the bot "says first" are dropped (a bot does not open a chat), and a
 * final human line with no recorded answer is dropped, since there is no
 * reply to check it against. Lines are trimmed because Telegram strips
 * surrounding whitespace from what users type.
 */
export function loadTranscripts(path: string, limit?: number): ScriptedConversation[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read transcripts from ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = transcriptFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path} is not a transcript file: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
  }
  const conversations: ScriptedConversation[] = [];
  for (const [sourceId, value] of Object.entries(parsed.data)) {
    if (limit !== undefined && conversations.length >= limit) break;
    const index = conversations.length;
    const turns = pairLines(value.content).map((pair, turn) => {
      const tag = formatTurnTag(index, turn);
      return { human: `${tag} ${pair.human}`, reply: `${tag} ${pair.reply}` };
    });
    if (turns.length > 0) conversations.push({ index, sourceId, turns });
  }
  if (conversations.length === 0) throw new Error(`${path} holds no conversation with at least one answered human line`);
  return conversations;
}

function pairLines(content: { message: string; agent: string }[]): { human: string; reply: string }[] {
  const runs: { agent: string; text: string }[] = [];
  for (const line of content) {
    const text = line.message.trim();
    if (text === '') continue;
    const last = runs.at(-1);
    if (last && last.agent === line.agent) last.text += `\n${text}`;
    else runs.push({ agent: line.agent, text });
  }
  while (runs[0] && runs[0].agent !== 'agent_1') runs.shift();
  const pairs: { human: string; reply: string }[] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) {
    const human = runs[i];
    const reply = runs[i + 1];
    if (human?.agent === 'agent_1' && reply?.agent === 'agent_2') pairs.push({ human: human.text, reply: reply.text });
  }
  return pairs;
}

/** The scripted model's lookup table: every human line of the run → its recorded reply. */
export function buildReplyLookup(conversations: ScriptedConversation[], maxTurns?: number): Record<string, string> {
  const replies: Record<string, string> = {};
  for (const conversation of conversations) {
    for (const turn of conversation.turns.slice(0, maxTurns)) replies[turn.human] = turn.reply;
  }
  return replies;
}
