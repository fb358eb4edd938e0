import { writeHooksFile, callHook, createConversation } from './hooks.ts';
import type { TestSystem } from './system.ts';
import { botToken } from './system.ts';
import { chatPrefix } from './turn-helpers.ts';
import { Random, type ConversationScript, type ScenarioAction } from './turn-random.ts';

/**
 * Triggered turns in the randomized scenario test (docs/tools.md,
 * "Triggered turns"): about one openai conversation in seven also gets a
 * signed `POST /hooks/{name}` mid-script, sometimes delivered twice under one
 * `X-Switchboard-Delivery` id, under the batch's faults. HOOKS_FILE names
 * conversations by id and is read at the gateway's start, so each such
 * chat's conversation is made before the system starts, as ingress would
 * make it. Drawn from a Random of their own; TURN_HOOKS=off leaves them out.
 */
export const hookShare = process.env.TURN_HOOKS === 'off' ? 0 : 0.15;

const hookStream = 0x400c5e11;
const hookSecret = 'scenario-hook-secret-0123456789';
const botAccount = botToken.split(':')[0] as string;

export const hookNameOf = (chatId: number) => `s${chatId}`;
const deliveryOf = (chatId: number) => `d-${chatId}-1`;

export function addHookActions(seed: number, scripts: ConversationScript[]): void {
  if (hookShare === 0) return;
  const random = new Random((seed ^ hookStream) >>> 0);
  for (const script of scripts) {
    const roll = random.float();
    const at = random.int(0, script.actions.length);
    const twice = random.float() < 0.5;
    if (script.runtime === 'codex' || roll >= hookShare) continue;
    const action: ScenarioAction = { kind: 'hook', text: `${chatPrefix(script.chatId)}h1 hook call`, twice, gapMs: random.int(0, 300) };
    script.actions.splice(at, 0, action);
  }
}

/** The conversations the hooks name, made before the gateway starts; returns HOOKS_FILE's path (undefined: no hooks). */
export async function prepareHooks(databaseUrl: string, scripts: readonly ConversationScript[]): Promise<string | undefined> {
  const hooks: Record<string, { secret: string; conversationId: number; prompt: string }> = {};
  for (const script of scripts) {
    if (!script.actions.some((a) => a.kind === 'hook')) continue;
    const conversationId = await createConversation(databaseUrl, { platform: 'telegram', accountId: botAccount, chatId: String(script.chatId), threadId: '', userScope: '' });
    hooks[hookNameOf(script.chatId)] = { secret: hookSecret, conversationId, prompt: '{{body}}' };
  }
  return Object.keys(hooks).length > 0 ? writeHooksFile(hooks) : undefined;
}

/** Calls the chat's hook as an outside system would (twice under one delivery id when the action says so); a problem line or undefined. */
export async function callScenarioHook(system: TestSystem, chatId: number, action: Extract<ScenarioAction, { kind: 'hook' }>): Promise<string | undefined> {
  const call = { name: hookNameOf(chatId), secret: hookSecret, body: action.text, deliveryId: deliveryOf(chatId), contentType: 'text/plain' };
  const first = await callHook(system.gateway.url, call);
  if (first.status !== 200) return `hook call answered ${first.status}: ${JSON.stringify(first.body)}`;
  if (!action.twice) return undefined;
  const again = await callHook(system.gateway.url, call);
  return again.status === 200 && again.body.outcome === 'duplicate' ? undefined : `the hook call's re-delivery answered ${again.status} ${JSON.stringify(again.body)}, not a duplicate`;
}

/** Check (t): the hook call was stored once, from `hook:<name>`, under its delivery id (the other checks hold it answered once). */
export async function checkHooks(system: TestSystem, script: ConversationScript): Promise<string[]> {
  if (!script.actions.some((a) => a.kind === 'hook')) return [];
  const rows = await system.sql<{ event_id: string; user_id: string }[]>`
    select e.event_id, e.user_id from inbound_events e join conversations c on c.id = e.conversation_id
    where c.chat_id = ${String(script.chatId)} and e.event_id like 'hook:%'`;
  const name = hookNameOf(script.chatId);
  const want = [{ event_id: `hook:${name}:${deliveryOf(script.chatId)}`, user_id: `hook:${name}` }];
  return JSON.stringify(rows) === JSON.stringify(want) ? [] : [`(t) hook inputs ${JSON.stringify(rows)}, want ${JSON.stringify(want)}`];
}
