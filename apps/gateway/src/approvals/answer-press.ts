import type { Api } from 'grammy';
import { renderAnsweredQuestion } from '@switchboard/core';
import type { Logger } from '@switchboard/logger';
import { answerTelegramCallback, respondToSlackAction, type ButtonPress, type InboundMessage } from '@switchboard/platforms';
import { answerButtonPress, type ApprovalDeps } from './answer-approval.ts';

/**
 * Each door's answer to a button press, once decided (answer-approval.ts).
 * Telegram: answerCallbackQuery (the presser sees the line as a short
 * notice; the question's buttons are removed by the worker's edit). A failed
 * answer only leaves the presser's spinner turning a few seconds more.
 */
export async function answerTelegramPress(deps: ApprovalDeps, api: Api, press: ButtonPress, log: Logger): Promise<void> {
  const outcome = await answerButtonPress(deps, press);
  const callbackQueryId = typeof press.answer.callbackQueryId === 'string' ? press.answer.callbackQueryId : undefined;
  if (!callbackQueryId) return;
  await answerTelegramCallback(api, callbackQueryId, outcome.text).catch((err: unknown) => log.warn({ err, outcome: outcome.kind }, 'telegram callback query not answered'));
}

/**
 * A press stored as the command it stands for (a Cancel button,
 * docs/schedules.md "In chat"): its spinner stops with no notice; what it did
 * comes as the command's reply in the chat, as for the typed command.
 */
export async function answerTelegramCommandPress(api: Api, message: InboundMessage, log: Logger): Promise<void> {
  const callbackQueryId = message.pressAnswer?.callbackQueryId;
  if (typeof callbackQueryId !== 'string') return;
  await answerTelegramCallback(api, callbackQueryId).catch((err: unknown) => log.warn({ err }, 'telegram callback query not answered'));
}

/** Slack: a refusal as an ephemeral line through the press's response_url (the decision itself shows in the edited question and the chat's line). */
export async function answerSlackPress(deps: ApprovalDeps, press: ButtonPress, log: Logger): Promise<void> {
  const outcome = await answerButtonPress(deps, press);
  const responseUrl = typeof press.answer.responseUrl === 'string' ? press.answer.responseUrl : undefined;
  if (!responseUrl || outcome.kind === 'decided') return;
  // Not awaited: Slack waits 3 s for the request's own answer, and the line is a courtesy.
  void respondToSlackAction(responseUrl, { text: outcome.text, replace: false }).catch((err: unknown) => log.warn({ err, outcome: outcome.kind }, 'slack action not answered'));
}

/** Interaction response types and the ephemeral flag (Discord interactions docs). */
const discordResponse = { channelMessage: 4, updateMessage: 7 } as const;
const ephemeral = 64;

/** Discord: the question rewritten in place without its buttons (type 7), or a refusal only the presser sees (type 4, ephemeral). */
export async function answerDiscordPress(deps: ApprovalDeps, press: ButtonPress): Promise<Record<string, unknown>> {
  const outcome = await answerButtonPress(deps, press);
  if (outcome.kind === 'refused') return { type: discordResponse.channelMessage, data: { content: outcome.text, flags: ephemeral } };
  return { type: discordResponse.updateMessage, data: { content: renderAnsweredQuestion(outcome.approval, outcome.text), components: [] } };
}
