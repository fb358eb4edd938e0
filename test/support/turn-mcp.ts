import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createScratchDir, repoRoot } from '@switchboard/harness';
import type { TestSystem } from './system.ts';
import { chatPrefix } from './turn-helpers.ts';
import { escapeRegex, Random, type ConversationScript, type ScenarioAction } from './turn-random.ts';

/**
 * MCP tool calls in the randomized scenario test (docs/tools.md, "MCP tool
 * servers"): every worker runs a small stdio MCP server (mcp-echo-server.mjs,
 * one read-only tool offered as `scen__echo`), and about one openai
 * conversation in seven sends a message the scripted model answers by calling
 * it, under the batch's kills, stalls and lost leases. Drawn from a Random of
 * their own; TURN_MCP=off leaves them (and the server) out.
 */
export const mcpShare = process.env.TURN_MCP === 'off' ? 0 : 0.15;

const mcpStream = 0x3c9e4a71;
export const mcpToolName = 'scen__echo';
const cancelled = 'cancelled: the turn was interrupted before this tool finished';

export function addMcpActions(seed: number, scripts: ConversationScript[]): void {
  if (mcpShare === 0) return;
  const random = new Random((seed ^ mcpStream) >>> 0);
  for (const script of scripts) {
    const roll = random.float();
    const at = random.int(0, script.actions.length);
    if (script.runtime === 'codex' || roll >= mcpShare) continue;
    const action: ScenarioAction = { kind: 'mcp', text: `${chatPrefix(script.chatId)}u1 look it up`, gapMs: random.int(0, 300) };
    script.actions.splice(at, 0, action);
  }
}

/** The workers' MCP_SERVERS: the echo server over stdio, enabled in every conversation; undefined when TURN_MCP=off. */
export function writeScenarioMcpServers(): string | undefined {
  if (mcpShare === 0) return undefined;
  const file = join(createScratchDir('scenario-mcp'), 'mcp-servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: { scen: { command: process.execPath, args: [join(repoRoot, 'test/support/mcp-echo-server.mjs')], enabledByDefault: true } } }));
  return file;
}

/** One rule per MCP message, used once: the model calls `scen__echo` with the message's text, then answers as usual. */
export function mcpRules(scripts: readonly ConversationScript[]): unknown[] {
  return scripts.flatMap((s) =>
    s.actions.flatMap((a) => (a.kind === 'mcp' ? [{ matchRegex: `^${escapeRegex(a.text)}$`, toolCalls: [{ name: mcpToolName, arguments: { text: a.text } }], times: 1 }] : [])),
  );
}

/**
 * Check (u): every stored result of the MCP tool is the server's echo of
 * the message (or the cancellation a stopped turn stores): a call never
 * reaches another chat's text, and a crash or a stall never stores a broken
 * result. The other checks hold its message answered once and every tool
 * call answered.
 */
export async function checkMcp(system: TestSystem, script: ConversationScript): Promise<string[]> {
  const action = script.actions.find((a) => a.kind === 'mcp');
  if (!action) return [];
  const rows = await system.sql<{ content: string }[]>`
    select m.content from messages m join sessions s on s.id = m.session_id join conversations c on c.id = s.conversation_id
    where c.chat_id = ${String(script.chatId)} and m.role = 'tool' and m.tool_name = ${mcpToolName}`;
  const allowed = new Set([`echoed: ${action.text}`, cancelled]);
  return rows.filter((r) => !allowed.has(r.content)).map((r) => `(u) ${mcpToolName} stored ${JSON.stringify(r.content.slice(0, 120))}`);
}
