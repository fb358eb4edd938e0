import type { HookConfig } from '@switchboard/config';
import { hookEventId, hookUserId, platforms, queueCapFor, renderHookPrompt, type Platform } from '@switchboard/core';
import { findHookConversation, storeInboundEvent, type HookConversation, type StoredInbound } from '@switchboard/db';
import { chatReplyTarget, type InboundMessage } from '@switchboard/platforms';
import { preciseNow } from '@switchboard/queue';
import { overRate } from '../ingress/admission.ts';
import { handOverStored, IngressError, type IngressDeps } from '../ingress/accept-inbound.ts';
import { classifyStoreError } from '../ingress/classify-store-error.ts';
import { inboundToStore } from '../ingress/inbound-to-store.ts';

/** One verified call of `POST /hooks/{name}`: the hook, its delivery id and the body as text. */
export interface HookCall {
  hook: HookConfig;
  deliveryId: string;
  body: string;
}

/**
 * What became of a verified call, as a value the route answers with.
 * `stored`: in Postgres before the answer (`refused`: over MAX_QUEUED_INPUT,
 * stored so the delivery id stays spent, never run). `not_stored`: nothing
 * was written, the code says why.
 */
export type HookOutcome =
  | { kind: 'stored'; outcome: 'accepted' | 'duplicate' | 'refused'; conversationId: number }
  | { kind: 'not_stored'; code: 'HOOK_CONVERSATION_MISSING' | 'HOOK_CONVERSATION_SUSPENDED' | 'HOOK_RATE_LIMITED' | 'INVALID_PAYLOAD' };

/**
 * Stores a triggered turn's input in the hook's conversation and hands it to
 * a worker, with the platforms' rules (DESIGN §4): store once under a unique
 * key (the conversation's platform and account, `hook:<name>:<delivery id>`)
 * before answering, a re-delivery is a duplicate, an outage throws
 * IngressError (503, so the caller retries). The input is plain text for the
 * model, never a chat command, from the user `hook:<name>` (core's hookUserId).
 */
export async function acceptHookCall(deps: IngressDeps, call: HookCall): Promise<HookOutcome> {
  let conversation: HookConversation | undefined;
  try {
    conversation = await findHookConversation(deps.db, call.hook.conversationId);
  } catch (error) {
    throw new IngressError('STORE_FAILED', error);
  }
  if (!conversation || !isPlatform(conversation.platform)) return { kind: 'not_stored', code: 'HOOK_CONVERSATION_MISSING' };
  if (conversation.status === 'suspended') return { kind: 'not_stored', code: 'HOOK_CONVERSATION_SUSPENDED' };
  const message = hookMessage(conversation, conversation.platform, call);
  // The per-user message rate, counted for the hook's own user: a leaked secret cannot run turns faster than a person could ask.
  if (await overRate(deps, message, 'messages')) return { kind: 'not_stored', code: 'HOOK_RATE_LIMITED' };
  let stored: StoredInbound;
  try {
    const row = inboundToStore(message, null, { refuseAtPending: queueCapFor('input', deps.maxQueuedInput) });
    stored = await storeInboundEvent(deps.db, { ...row, conversationKey: conversation.key });
  } catch (error) {
    if (classifyStoreError(error).kind === 'outage') throw new IngressError('STORE_FAILED', error);
    return { kind: 'not_stored', code: 'INVALID_PAYLOAD' };
  }
  const storedAt = preciseNow();
  const done = { kind: 'stored', conversationId: stored.conversationId } as const;
  if (stored.duplicate && stored.status !== 'pending') return { ...done, outcome: 'duplicate' };
  if (stored.status === 'refused') return { ...done, outcome: 'refused' };
  return { ...done, outcome: await handOverStored(deps, { stored, signal: 'input', storedAt }) };
}

function hookMessage(conversation: HookConversation, platform: Platform, call: HookCall): InboundMessage {
  const address = { platform, accountId: conversation.accountId, chatId: conversation.chatId, threadId: conversation.threadId, userScope: conversation.userScope };
  return {
    platform,
    eventId: hookEventId(call.hook.name, call.deliveryId),
    address,
    userId: hookUserId(call.hook.name),
    text: renderHookPrompt(call.hook.prompt, call.body),
    replyTarget: chatReplyTarget(address),
  };
}

function isPlatform(value: string): value is Platform {
  return (platforms as readonly string[]).includes(value);
}
