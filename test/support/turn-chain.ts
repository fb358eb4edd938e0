import { renderTranscriptForSummary } from '@switchboard/agent';
import { lastUserText, type ChatSnapshot, type ModelRequest, type StoredMessage, type StoredSession } from './turn-helpers.ts';
import { transcriptPrefix } from './turn-random.ts';

/**
 * The current session chain (docs/compression.md "Words", "The commit"): the
 * conversation's current session and its ancestors by `parent_session_id`.
 * A compression ends a session and starts its only child, which opens with
 * the summary of the part the compression summarised and goes on with copies
 * of the part it kept; whatever the parent holds after the part the
 * compression read is in neither, so the agent has forgotten it (issue 29,
 * defect 1). What the summary covers is what the summariser was given: the
 * sim records each summariser request, whose transcript renders exactly the
 * summarised messages (renderTranscriptForSummary).
 */
export interface SessionChain {
  /** The sessions of the chain, root first (none for a hand-made snapshot without sessions). */
  links: StoredSession[];
  /**
   * What the chain holds, oldest first, each stored message once: of each
   * ancestor, the messages its child's summary covers; then the child's
   * own messages (its summary row, the kept copies, what came after), and so
   * on to the current session, whole.
   */
  view: StoredMessage[];
  /** Stored messages the chain does not hold, each with the reason. */
  lost: { message: StoredMessage; why: string }[];
  /** What could not be matched (a summary no summariser request was asked for). */
  problems: string[];
}

/** The chain of `snapshot`; without sessions loaded (a hand-made snapshot), its messages are one session. */
export function sessionChain(snapshot: ChatSnapshot): SessionChain {
  const sessions = snapshot.sessions;
  if (!sessions || snapshot.currentSessionId === undefined || snapshot.currentSessionId === null) return { links: [], view: snapshot.messages, lost: [], problems: [] };
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const links: StoredSession[] = [];
  for (let s = byId.get(snapshot.currentSessionId); s && !links.includes(s); s = s.parent_session_id === null ? undefined : byId.get(s.parent_session_id)) {
    links.unshift(s);
  }
  const chain: SessionChain = { links, view: [], lost: [], problems: [] };
  for (const [i, parent] of links.slice(0, -1).entries()) {
    const child = links[i + 1]!;
    const cover = coverage(parent, child, snapshot.summaries);
    chain.problems.push(...cover.problems);
    chain.view.push(...parent.messages.slice(0, cover.summarised));
    for (const message of parent.messages.slice(cover.summarised + cover.kept)) {
      chain.lost.push({ message, why: `session ${parent.id} holds it after the ${cover.summarised + cover.kept} messages its compression read (summarised ${cover.summarised}, kept ${cover.kept} in child ${child.id})` });
    }
  }
  chain.view.push(...(links.at(-1)?.messages ?? []));
  // A reset or a restart-loop suspension ends a session for good (finalized): forgetting it is the point.
  for (const s of sessions.filter((s) => !links.includes(s) && s.status !== 'finalized')) {
    for (const message of s.messages) chain.lost.push({ message, why: `session ${s.id} (${s.status}) is not in the current chain and was not ended by a reset` });
  }
  return chain;
}

interface Coverage {
  /** The parent's first messages its child's summary covers. */
  summarised: number;
  /** The parent's messages after those, copied into the child. */
  kept: number;
  problems: string[];
}

/**
 * What the child's summary and copies cover of its parent. The copies are the
 * child's messages after its summary that repeat a run of the parent's; the
 * summary covers the parent's messages before that run, or, with nothing kept,
 * the longest prefix of the parent a summariser request rendered (the one
 * that committed: compressions of one session hold its advisory lock in turn,
 * each reads the session as it then is, and none asks for a summary once the
 * pointer has moved on).
 */
function coverage(parent: StoredSession, child: StoredSession, summaries: ModelRequest[] | undefined): Coverage {
  const rest = child.messages.filter((m) => m.kind !== 'summary');
  const first = rest[0] ? parent.messages.findIndex((m) => sameMessage(m, rest[0]!)) : -1;
  let kept = 0;
  while (first >= 0 && kept < rest.length && sameMessage(parent.messages[first + kept], rest[kept]!)) kept++;
  // Without the summariser's requests (a test that does not record them), the copies are all there is to go by.
  if (!summaries) return { summarised: first >= 0 ? first : parent.messages.length, kept, problems: [] };
  const read = summarisedPrefixes(parent.messages, summaries);
  if (first >= 0) {
    const problems = read.includes(first) ? [] : [`no summariser request was given exactly the ${first} messages of session ${parent.id} before the ones its child ${child.id} kept`];
    return { summarised: first, kept, problems };
  }
  if (read.length === 0) {
    return { summarised: parent.messages.length, kept: 0, problems: [`no summariser request was given a part of session ${parent.id}, yet child ${child.id} opens with a summary`] };
  }
  return { summarised: Math.max(...read), kept: 0, problems: [] };
}

/** The lengths k for which some summariser request's transcript is exactly the parent's first k messages. */
function summarisedPrefixes(messages: StoredMessage[], summaries: ModelRequest[]): number[] {
  const transcripts = new Set(summaries.map((r) => lastUserText(r)).filter((t) => t.startsWith(`${transcriptPrefix}\n`)).map((t) => withoutUnreadMarks(t.slice(transcriptPrefix.length + 1))));
  const lengths: number[] = [];
  let rendered = '';
  for (const [i, m] of messages.entries()) {
    const line = renderTranscriptForSummary([{ role: m.role, kind: m.kind ?? 'message', content: m.content, toolName: m.tool_name, toolCalls: m.tool_calls }]);
    rendered = i === 0 ? line : `${rendered}\n${line}`;
    if (transcripts.has(rendered)) lengths.push(i + 1);
  }
  return lengths;
}

/** The summariser marks the results of an unread tool tail "never read"; which tail was unread is not the question here. */
function withoutUnreadMarks(transcript: string): string {
  return transcript.replace(/^\[([^\]\n]*), never read\]/gm, '[$1]');
}

/** A compression's copy is the message with its role, ids and timestamp (docs/compression.md "The commit"). */
export function sameMessage(a: StoredMessage | undefined, b: StoredMessage): boolean {
  if (!a) return false;
  const key = (m: StoredMessage) =>
    JSON.stringify([m.role, m.kind ?? 'message', m.content, m.tool_calls, m.tool_call_id, m.inbound_event_id, m.turn_id, m.created_at?.getTime()]);
  return key(a) === key(b);
}

/** A stored message, named for a problem line. */
export function describeMessage(m: StoredMessage): string {
  return `${m.role} message s${m.session_id}/${m.seq} of turn ${m.turn_id ?? '-'} ${JSON.stringify(m.content.slice(0, 48))}`;
}
