import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { SimError } from './errors.ts';
import type { EventHub } from './event-hub.ts';
import { describeFetchError, elapsed, parseAnswer } from './outbound-answer.ts';
import { postToGateway } from './outbound-post.ts';
import { parseBody } from './parse-body.ts';
import { signSlackRequest } from './slack-events.ts';
import type { SlackStore } from './slack-store.ts';
import { slackWorkspace, type SlackSentRecord } from './slack-types.ts';

export interface SlackButtonDeps {
  store: SlackStore;
  hub: EventHub;
  shutdown: AbortSignal;
}

const pressSchema = z
  .object({
    channel: z.string().min(1),
    /** The ts of the bot's message the button is on. */
    ts: z.string().min(1),
    user: z.string().min(1),
    /** The button's label; or `value`, what it carries. */
    text: z.string().min(1).optional(),
    value: z.string().min(1).optional(),
    signing: z.enum(['valid', 'bad', 'stale', 'none']).default('valid'),
    /** The Interactivity Request URL; default: the Request URL with /events replaced by /interactions. */
    url: z.string().url().optional(),
  })
  .strict()
  .refine((input) => input.text !== undefined || input.value !== undefined, { message: 'text or value is required' });

interface SlackButton {
  type: 'button';
  action_id: string;
  value?: string;
  text?: { text?: string };
}

/** Slack waits 3 s for an interaction's answer. */
const answerTimeoutMs = 3000;

/**
 * `/control/slack/press`: a user presses a button in one of the bot's
 * messages. Slack POSTs a signed form (`payload=` a block_actions JSON) to
 * the app's Interactivity Request URL; the payload's `response_url` points
 * back at the sim (`/slack/actions/<id>`), which records what the app posts
 * there (`/control/slack/responses`).
 */
export async function registerSlackButtons(app: FastifyInstance, deps: SlackButtonDeps): Promise<void> {
  const { store, hub, shutdown } = deps;

  app.post('/control/slack/press', async (request) => {
    const input = parseBody(pressSchema, request.body);
    const message = store.findSent(input.channel, input.ts);
    const button = message ? findButton(message, input) : undefined;
    if (!message || !button) throw new SimError('SIM_NO_SUCH_BUTTON', `no such button on message ${input.ts} in ${input.channel}`, 404);
    const url = input.url ?? store.interactionsUrl();
    if (!url) throw new SimError('SIM_NO_REQUEST_URL', 'no Interactivity Request URL (POST /control/slack/request-url sets the events URL it is derived from)', 409);
    const responseId = store.takeResponseId();
    const payload = buildBlockActions(message, button, input.user, `http://${request.headers.host ?? '127.0.0.1'}/slack/actions/${responseId}`);
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const headers = { 'content-type': 'application/x-www-form-urlencoded', ...signSlackRequest(store.options.signingSecret ?? '', body, input.signing) };
    const startedAt = performance.now();
    let result: { status: number; body: unknown; ackMs: number; error?: string };
    try {
      const answer = await postToGateway({ url, headers, body }, answerTimeoutMs, shutdown);
      result = { status: answer.status, body: parseAnswer(answer.text), ackMs: elapsed(startedAt) };
    } catch (error) {
      result = { status: 0, body: null, ackMs: elapsed(startedAt), error: describeFetchError(error) };
    }
    hub.publish('slack.interaction', { payload, ...result });
    return { ...result, payload, response_id: responseId };
  });

  // The response_url of a press: what the app posts here is recorded (ephemeral lines, replaced messages).
  app.post<{ Params: { id: string } }>('/slack/actions/:id', async (request) => {
    const record = { response_id: request.params.id, body: request.body, at: Date.now() };
    store.responses.push(record);
    hub.publish('slack.response', record);
    return { ok: true };
  });

  app.get('/control/slack/responses', async () => store.responses);
}

function findButton(message: SlackSentRecord, input: { text?: string; value?: string }): SlackButton | undefined {
  const blocks = Array.isArray(message.blocks) ? (message.blocks as { type?: string; elements?: unknown }[]) : [];
  const buttons = blocks.flatMap((block) => (block.type === 'actions' && Array.isArray(block.elements) ? (block.elements as SlackButton[]) : [])).filter((e) => e.type === 'button');
  return buttons.find((button) => (input.value !== undefined ? button.value === input.value : button.text?.text === input.text));
}

/** Presses so far: each press's trigger_id is its own, as Slack's are. */
let pressCount = 0;

function buildBlockActions(message: SlackSentRecord, button: SlackButton, user: string, responseUrl: string): Record<string, unknown> {
  const actionTs = String(Date.now() / 1000);
  // A message in a thread names it, in the container and the message (Slack block_actions payloads).
  const thread = message.thread_ts !== undefined ? { thread_ts: message.thread_ts } : {};
  return {
    type: 'block_actions',
    user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: slackWorkspace.teamId },
    api_app_id: slackWorkspace.appId,
    token: slackWorkspace.verificationToken,
    container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, ...thread },
    trigger_id: `${Date.now()}.${++pressCount}.sim`,
    team: { id: slackWorkspace.teamId, domain: 'switchboard-sim' },
    channel: { id: message.channel, name: message.channel },
    message: { type: 'message', ts: message.ts, text: message.text, blocks: message.blocks, user: slackWorkspace.botUserId, bot_id: slackWorkspace.botId, ...thread },
    response_url: responseUrl,
    actions: [{ type: 'button', action_id: button.action_id, block_id: 'switchboard_choices', value: button.value, text: button.text, action_ts: actionTs }],
  };
}
