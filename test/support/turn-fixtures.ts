import { renderTranscriptForSummary } from '@switchboard/agent';
import { findToolTail } from '@switchboard/core';
import { recoveryNotePrefix, type ChatMessage, type ChatSnapshot, type ModelRequest, type StoredMessage, type StoredSession, type StoredTurn } from './turn-helpers.ts';
import { transcriptPrefix } from './turn-random.ts';

/**
 * Hand-made snapshots and model requests for the invariant checks' own unit
 * tests: each check is fed a violation it must catch and the good case next
 * to it. Times are ms from `base`, on the sim's clock (requests) and
 * Postgres's (turns) alike.
 */

export const base = 1_700_000_000_000;
export const at = (ms: number) => new Date(base + ms);

export const note: ChatMessage = { role: 'system', content: `${recoveryNotePrefix} before you read the results of its last tool calls.` };
export const sys: ChatMessage = { role: 'system', content: 'You are Switchboard.' };
export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const calls = (id: string): ChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'wait', arguments: '{}' } }] });
export const tool = (id: string): ChatMessage => ({ role: 'tool', content: 'cancelled: …', tool_call_id: id });

let nextRequestId = 1;
/** A request the sim got at `receivedMs`, answered at once and read to the end unless `fate` says otherwise. */
export function timed(receivedMs: number, fate: 'finished' | 'aborted' | 'unanswered', ...messages: ChatMessage[]): ModelRequest {
  const receivedAt = base + receivedMs;
  const request: ModelRequest = { id: nextRequestId++, receivedAt, body: { messages }, stream: true };
  if (fate !== 'unanswered') request.respondedAt = receivedAt + 1;
  if (fate === 'finished') request.finishedAt = receivedAt + 2;
  else request.abortedAt = receivedAt + 3;
  return request;
}

export function stored(seq: number, turn: number | null, role: StoredMessage['role'], content: string, extra: Partial<StoredMessage> = {}): StoredMessage {
  return { session_id: 1, seq, role, content, tool_calls: null, tool_call_id: null, tool_name: null, inbound_event_id: null, turn_id: turn, ...extra };
}

/** An assistant message asking for the `wait` tool, and its stored result (cancelled: the turn was interrupted). */
export const storedCalls = (seq: number, turn: number, id: string) => stored(seq, turn, 'assistant', '', { tool_calls: [{ id, name: 'wait', arguments: '{}' }] });
export const storedTool = (seq: number, turn: number, id: string) => stored(seq, turn, 'tool', 'cancelled: …', { tool_call_id: id, tool_name: 'wait' });

export function turn(id: number, status: string, startMs: number, endMs: number, extra: Partial<StoredTurn> = {}): StoredTurn {
  return { id, status, error: null, started_at: at(startMs), ended_at: at(endMs), cut_off_at: null, ...extra };
}

export function snapshot(messages: StoredMessage[], partial: Partial<ChatSnapshot> = {}): ChatSnapshot {
  return { chatId: 1, conversationId: 1, busyMode: null, recoveryAckKey: null, messages, events: [], turns: [], outbox: [], ...partial };
}

/** `recovery_ack_key` for the stored tool tail `tools` (findToolTail's key, as the worker stores it). */
export function ackOf(...tools: StoredMessage[]): string {
  const tail = findToolTail([{ role: 'assistant', content: '', toolCalls: [{}] }, ...tools.map((m) => ({ role: 'tool' as const, content: m.content, toolCallId: m.tool_call_id, toolName: m.tool_name }))]);
  return tail?.key ?? '';
}

export function session(id: number, parent: number | null, status: string, messages: StoredMessage[], ack: string | null = null): StoredSession {
  return { id, parent_session_id: parent, status, recovery_ack_key: ack, messages: messages.map((m) => ({ ...m, session_id: id })) };
}

/** The summariser's request over `messages`, rendered as the worker renders them. */
export function summariserRequest(messages: StoredMessage[]): ModelRequest {
  const transcript = renderTranscriptForSummary(messages.map((m) => ({ role: m.role, kind: m.kind ?? 'message', content: m.content, toolName: m.tool_name, toolCalls: m.tool_calls })));
  return timed(0, 'finished', { role: 'system', content: 'You compress chat transcripts.' }, user(`${transcriptPrefix}\n${transcript}`));
}
