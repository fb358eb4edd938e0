import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sleepUnlessAborted } from './abortable.ts';
import { classifyError } from './errors.ts';
import { watchClient } from './http-helpers.ts';
import { baseUrlOf, slackFileObject, type MediaStore } from './media-files.ts';
import type { SlackStore } from './slack-store.ts';
import { SlackApiError, slackWorkspace, type SlackFault, type SlackSentRecord } from './slack-types.ts';

export interface SlackWebApiDeps {
  store: SlackStore;
  shutdown: AbortSignal;
  /** Users' files, for files.info. */
  media?: MediaStore;
}

type Params = Record<string, unknown>;
type MethodHandler = (store: SlackStore, params: Params) => Record<string, unknown>;

interface WebApiRoute {
  Params: { method: string };
}

/** Slack stores at most this many characters of a message's text and cuts the rest (Slack Web API docs). */
const maxTextLength = 40_000;
const tsPattern = /^\d+\.\d+$/;

const methods = new Map<string, MethodHandler>([
  ['api.test', (_store, params) => ({ args: Object.fromEntries(Object.entries(params).filter(([name]) => name !== 'token')) })],
  ['auth.test', authTest],
  ['chat.postmessage', postMessage],
  ['chat.update', updateMessage],
  ['reactions.add', (store, params) => changeReaction(store, params, 'add')],
  ['reactions.remove', (store, params) => changeReaction(store, params, 'remove')],
]);

/**
 * `GET|POST /api/<method>`: Slack's Web API envelope. Parameters come from the
 * query and a form-urlencoded or JSON body (body wins); the token from
 * `Authorization: Bearer` or a `token` parameter. Answers are HTTP 200
 * `{ok:true, …}` or `{ok:false, error}`; only a rate limit is a 429.
 */
export async function registerSlackWebApi(app: FastifyInstance, deps: SlackWebApiDeps): Promise<void> {
  const { store, shutdown } = deps;

  // Body and framework errors on these routes still answer in the Web API's envelope.
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof SlackApiError) return sendSlackError(reply, error);
    const { statusCode, code } = classifyError(error);
    if (statusCode >= 500) return sendSlackError(reply, new SlackApiError('internal_error', 500));
    return sendSlackError(reply, new SlackApiError(code === 'SIM_BAD_JSON' ? 'invalid_json' : 'invalid_arguments'));
  });

  app.route<WebApiRoute>({
    method: ['GET', 'POST'],
    url: '/api/:method',
    handler: async (request, reply) => {
      const { method } = request.params;
      const params = mergeParams(request);
      const token = readToken(request, params);
      if (token === undefined) return sendSlackError(reply, new SlackApiError('not_authed'));
      if (store.options.botToken !== undefined && token !== store.options.botToken) return sendSlackError(reply, new SlackApiError('invalid_auth'));
      const media = deps.media;
      const handler: MethodHandler | undefined =
        method.toLowerCase() === 'files.info' && media ? (_store, params) => filesInfo(media, baseUrlOf(request), params) : methods.get(method.toLowerCase());
      if (!handler) return reply.send({ ok: false, error: 'unknown_method', req_method: method });

      const { signal, clientGone } = watchClient(reply, shutdown);
      const fault = store.takeFault(method);
      if (fault) {
        const failure = await applyFault(fault, signal);
        if (failure) return sendSlackError(reply, failure);
      }
      const result = handler(store, params);
      if (clientGone()) return reply.hijack();
      return reply.send({ ok: true, ...result });
    },
  });
}

/** files.info: the file object with its url_private (Slack Web API, "files.info"). */
function filesInfo(media: MediaStore, base: string, params: Params): Record<string, unknown> {
  const file = typeof params.file === 'string' ? media.files.get(params.file) : undefined;
  if (!file) throw new SlackApiError('file_not_found');
  return { file: slackFileObject(base, file), comments: [], response_metadata: { next_cursor: '' } };
}

export function sendSlackError(reply: FastifyReply, error: SlackApiError): FastifyReply {
  return reply.code(error.httpStatus).headers(error.headers).send({ ok: false, error: error.error });
}

/** Delay faults hold the call and let it through; the others replace its answer. */
async function applyFault(fault: SlackFault, signal: AbortSignal): Promise<SlackApiError | undefined> {
  if (fault.kind === 'delay') {
    await sleepUnlessAborted(fault.delayMs, signal);
    return undefined;
  }
  if (fault.kind === '429') return new SlackApiError('ratelimited', 429, { 'retry-after': String(fault.retryAfter) });
  return new SlackApiError(fault.status === 503 ? 'service_unavailable' : 'internal_error', fault.status);
}

function authTest(): Record<string, unknown> {
  return {
    url: slackWorkspace.url,
    team: slackWorkspace.teamName,
    user: slackWorkspace.botName,
    team_id: slackWorkspace.teamId,
    user_id: slackWorkspace.botUserId,
    bot_id: slackWorkspace.botId,
    is_enterprise_install: false,
  };
}

function postMessage(store: SlackStore, params: Params): Record<string, unknown> {
  const channel = readString(params, 'channel');
  if (!channel) throw new SlackApiError('channel_not_found');
  const text = readString(params, 'text') ?? '';
  const blocks = readJsonParam(params.blocks ?? params.attachments);
  if (text === '' && blocks === undefined) throw new SlackApiError('no_text');
  const threadTs = readString(params, 'thread_ts');
  if (threadTs !== undefined && threadTs !== '' && !tsPattern.test(threadTs)) throw new SlackApiError('invalid_thread_ts');
  const record: SlackSentRecord = {
    ts: store.takeTs(),
    channel,
    ...(threadTs ? { thread_ts: threadTs } : {}),
    text: text.slice(0, maxTextLength),
    ...(text.length > maxTextLength ? { truncated: true as const } : {}),
    ...(readBoolean(params, 'reply_broadcast') ? { reply_broadcast: true as const } : {}),
    ...(blocks !== undefined ? { blocks } : {}),
    sentAt: Date.now(),
  };
  store.recordSent(record);
  return { channel, ts: record.ts, message: describeMessage(record) };
}

function updateMessage(store: SlackStore, params: Params): Record<string, unknown> {
  const channel = readString(params, 'channel');
  if (!channel) throw new SlackApiError('channel_not_found');
  const ts = readString(params, 'ts');
  if (!ts) throw new SlackApiError('message_not_found');
  const record = store.findSent(channel, ts);
  // Every message the sim knows in a channel is the bot's own; anyone else's is not found.
  if (!record) throw new SlackApiError('message_not_found');
  const text = readString(params, 'text') ?? '';
  if (text === '' && params.blocks === undefined) throw new SlackApiError('no_text');
  const editedAt = Date.now();
  record.text = text.slice(0, maxTextLength);
  if (params.blocks !== undefined) record.blocks = readJsonParam(params.blocks);
  record.editedAt = editedAt;
  record.edits = [...(record.edits ?? []), { text: record.text, editedAt }];
  store.recordEdit(record);
  return { channel, ts, text: record.text, message: { ...describeMessage(record), edited: { user: slackWorkspace.botUserId, ts: store.takeTs() } } };
}

/** reactions.add / reactions.remove on any message by channel and ts (the sim does not keep users' messages); `name` without colons. */
function changeReaction(store: SlackStore, params: Params, change: 'add' | 'remove'): Record<string, unknown> {
  const channel = readString(params, 'channel');
  if (!channel) throw new SlackApiError('channel_not_found');
  const ts = readString(params, 'timestamp');
  if (!ts || !tsPattern.test(ts)) throw new SlackApiError('bad_timestamp');
  const name = readString(params, 'name');
  if (!name || !/^[a-z0-9_+-]+$/.test(name)) throw new SlackApiError('invalid_name');
  const key = `${channel}:${ts}`;
  if (change === 'add' && !store.reactions.add(key, name)) throw new SlackApiError('already_reacted');
  if (change === 'remove' && !store.reactions.remove(key, name)) throw new SlackApiError('no_reaction');
  return {};
}

function describeMessage(record: SlackSentRecord): Record<string, unknown> {
  return {
    type: 'message',
    user: slackWorkspace.botUserId,
    bot_id: slackWorkspace.botId,
    app_id: slackWorkspace.appId,
    text: record.text,
    ts: record.ts,
    team: slackWorkspace.teamId,
    ...(record.thread_ts ? { thread_ts: record.thread_ts } : {}),
    bot_profile: { id: slackWorkspace.botId, app_id: slackWorkspace.appId, name: slackWorkspace.botName, team_id: slackWorkspace.teamId, deleted: false },
  };
}

function mergeParams(request: FastifyRequest): Params {
  const query = (request.query ?? {}) as Params;
  const body = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...query, ...(body as Params) } : { ...query };
}

function readToken(request: FastifyRequest, params: Params): string | undefined {
  const header = request.headers.authorization;
  const bearer = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
  if (bearer) return bearer;
  return typeof params.token === 'string' && params.token !== '' ? params.token : undefined;
}

function readString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new SlackApiError('invalid_arguments');
}

function readBoolean(params: Params, name: string): boolean {
  const value = params[name];
  return value === true || value === 'true' || value === '1' || value === 1;
}

/** Form-encoded calls carry arrays (blocks) as JSON text, as @slack/web-api sends them; JSON bodies carry them as they are. */
function readJsonParam(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new SlackApiError('invalid_blocks_format');
  }
}
