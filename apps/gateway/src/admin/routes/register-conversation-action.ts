import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from '@fastify/type-provider-typebox';
import type { ConversationActions, Door } from '@switchboard/actions';
import { loadConversationSummary } from '@switchboard/db';
import { auditAction, type AdminContext } from '../admin-context.ts';
import type { AdminError, AdminErrorCode } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import { ConversationView, viewConversation } from '../schemas/conversation-schemas.ts';
import { notFound } from './conversation-routes.ts';

export const ActionResult = Type.Object({ ok: Type.Literal(true), conversation: ConversationView });
export const tags = ['actions'];

/** What an action route is given once the request is parsed: the action is called through `door`, the operator's. */
export interface ActionCall<I, O> {
  actions: ConversationActions;
  id: number;
  input: I;
  door: Door<O>;
}

/** The actions that change a conversation and answer with it. */
export type ActionName = 'suspend' | 'resume' | 'reset' | 'setBusyMode' | 'setRuntime' | 'setStreaming' | 'setModel';
export type OutcomeOf<K extends ActionName> = Awaited<ReturnType<ConversationActions[K]>>;

/**
 * A conversation action as the admin API offers it: one route, one action
 * of packages/actions, one audit row. The route says only how to call the
 * action and how its outcome is answered; the skeleton (parse, call through
 * the audited door, refuse or answer with the conversation as it is now) is
 * registerConversationAction's.
 */
export interface ConversationActionRoute<B extends TSchema, K extends ActionName> {
  /** The action called; it fixes the type of the outcome the route answers. */
  action: K;
  method: 'POST' | 'PUT';
  /** The path under /conversations/:id/. */
  path: string;
  summary: string;
  body?: B;
  /** The refusals it documents, beside 401 and 429 (every admin route's). */
  refusals: number[];
  /** The audit row's action, e.g. `conversation.model`. */
  audit: string;
  act: (call: ActionCall<Static<B>, OutcomeOf<K>>) => Promise<OutcomeOf<K>>;
  /** The error a refused outcome is answered with, whose code is also the audit row's result; undefined: done. */
  refuse: (outcome: OutcomeOf<K>, id: number) => AdminError | undefined;
  /** The audit row's detail. */
  detail: (outcome: OutcomeOf<K>, input: Static<B>) => Record<string, unknown>;
}

/**
 * Registers one conversation action route. The action and its audit row
 * commit in one transaction (the door's record runs inside it); a refusal is
 * thrown after, so the row says why the request was refused.
 */
export function registerConversationAction<B extends TSchema, K extends ActionName>(scope: FastifyInstance, ctx: AdminContext, route: ConversationActionRoute<B, K>): void {
  scope.route<{ Params: Static<typeof IdParams> }>({
    method: route.method,
    url: `/conversations/:id/${route.path}`,
    schema: {
      tags,
      summary: route.summary,
      params: IdParams,
      ...(route.body ? { body: route.body } : {}),
      response: { 200: ActionResult, ...errors(...route.refusals) },
    },
    handler: async (request) => {
      const id = request.params.id;
      const input = request.body as Static<B>;
      const door = audited(ctx, request, { action: route.audit, id }, (outcome: OutcomeOf<K>) => ({ code: route.refuse(outcome, id)?.code ?? null, detail: route.detail(outcome, input) }));
      const outcome = await route.act({ actions: ctx.actions, id, input, door });
      const refusal = route.refuse(outcome, id);
      if (refusal) throw refusal;
      return { ok: true as const, conversation: await reloadConversation(ctx, id) };
    },
  });
}

export interface Audit {
  /** null when the action happened; else the code the request is refused with. */
  code: AdminErrorCode | null;
  detail: Record<string, unknown>;
}

/** The operator's door to an action: its audit row is written in the action's own transaction, with the turns it superseded, if any. */
export function audited<T>(ctx: AdminContext, request: FastifyRequest, on: { action: string; id: number }, describe: (outcome: T) => Audit): Door<T> {
  return {
    kind: 'operator',
    record: async (tx, outcome, supersededTurnIds) => {
      const { code, detail } = describe(outcome);
      const withTurns = supersededTurnIds.length > 0 ? { ...detail, supersededTurnIds } : detail;
      await auditAction(ctx, tx, request, { action: on.action, target: conversationTarget(on.id), result: code ?? 'ok', detail: withTurns });
    },
  };
}

/** Records a refused request that reached no action, then refuses it. */
export async function failAudited(ctx: AdminContext, request: FastifyRequest, on: { action: string; id: number }, error: AdminError): Promise<never> {
  await auditAction(ctx, ctx.db, request, { action: on.action, target: conversationTarget(on.id), result: error.code });
  throw error;
}

/** The conversation as it is after the action, as the answer shows it. */
async function reloadConversation(ctx: AdminContext, id: number) {
  const row = await loadConversationSummary(ctx.db, id);
  if (!row) throw notFound(id);
  return viewConversation(row);
}

export function conversationTarget(id: number): string {
  return `conversation:${id}`;
}
