import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { listApprovals, listConversations, loadConversationDetail, loadConversationSummary, loadTranscriptPage, sessionBelongsTo } from '@switchboard/db';
import type { AdminContext } from '../admin-context.ts';
import { ApprovalList, viewApproval } from '../schemas/approval-schemas.ts';
import { AdminError } from '../admin-errors.ts';
import { errors, IdParams } from '../schemas/common-schemas.ts';
import {
  ConversationDetailView,
  ConversationList,
  ConversationListQuery,
  TranscriptQuery,
  TranscriptView,
  viewConversation,
  viewDetail,
  viewMessage,
} from '../schemas/conversation-schemas.ts';

/** Reading conversations: the list, one with its session chain, and the transcript across the chain. */
export function registerConversationRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerConversationListRoute(scope, ctx);
  registerConversationDetailRoute(scope, ctx);
  registerTranscriptRoute(scope, ctx);
  registerApprovalListRoute(scope, ctx);
}

function registerConversationListRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/conversations',
    {
      schema: {
        tags: ['conversations'],
        summary: 'List conversations, newest first',
        querystring: ConversationListQuery,
        response: { 200: ConversationList, ...errors(400) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listConversations(ctx.db, {
        platform: q.platform,
        status: q.status,
        busy: q.busy,
        busyMode: q.busyMode,
        updatedSince: q.updatedSince ? new Date(q.updatedSince) : undefined,
        cursor: q.cursor,
        limit: q.limit ?? 50,
      });
      return { items: page.items.map(viewConversation), nextCursor: page.nextCursor };
    },
  );
}

function registerConversationDetailRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/conversations/:id',
    {
      schema: {
        tags: ['conversations'],
        summary: 'One conversation: status, busy mode, runtime and permission profile, restart counter, session chain, running turn, queued input',
        params: IdParams,
        response: { 200: ConversationDetailView, ...errors(400, 404) },
      },
    },
    async (request) => {
      const detail = await loadConversationDetail(ctx.db, request.params.id);
      if (!detail) throw notFound(request.params.id);
      return viewDetail(detail, { busyMode: ctx.config.BUSY_INPUT_MODE, runtime: ctx.config.AGENT_RUNTIME, fullAccessAllowed: ctx.config.CODEX_ALLOW_FULL_ACCESS });
    },
  );
}

function registerTranscriptRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/conversations/:id/transcript',
    {
      schema: {
        tags: ['conversations'],
        summary: 'The transcript across the session chain, paged (stored messages only: API-only context is never stored)',
        params: IdParams,
        querystring: TranscriptQuery,
        response: { 200: TranscriptView, ...errors(400, 404) },
      },
    },
    async (request) => {
      const conversationId = request.params.id;
      const q = request.query;
      if (!(await loadConversationSummary(ctx.db, conversationId))) throw notFound(conversationId);
      if (q.session !== undefined && !(await sessionBelongsTo(ctx.db, conversationId, q.session))) {
        throw new AdminError('SESSION_NOT_FOUND', `session ${q.session} is not a session of conversation ${conversationId}`, { field: 'session' });
      }
      const [sessionId, seq] = q.cursor ? q.cursor.split(':').map(Number) : [];
      const page = await loadTranscriptPage(ctx.db, {
        conversationId,
        headSessionId: q.session,
        after: sessionId !== undefined && seq !== undefined ? { sessionId, seq } : undefined,
        order: q.order === 'desc' ? 'desc' : 'asc',
        limit: q.limit ?? 100,
      });
      const turnIds = [...new Set(page.messages.flatMap((m) => (m.turnId === null ? [] : [m.turnId])))];
      return {
        conversationId,
        messages: page.messages.map(viewMessage),
        nextCursor: page.next ? `${page.next.sessionId}:${page.next.seq}` : null,
        approvals: (await listApprovals(ctx.db, conversationId, turnIds)).map(viewApproval),
      };
    },
  );
}

function registerApprovalListRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/conversations/:id/approvals',
    {
      schema: {
        tags: ['conversations'],
        summary: 'Every question asked of the chat user in this conversation (approvals), oldest first, with who decided, how and when',
        params: IdParams,
        response: { 200: ApprovalList, ...errors(404) },
      },
    },
    async (request) => {
      const conversationId = request.params.id;
      if (!(await loadConversationSummary(ctx.db, conversationId))) throw notFound(conversationId);
      return { conversationId, approvals: (await listApprovals(ctx.db, conversationId)).map(viewApproval) };
    },
  );
}

export function notFound(conversationId: number): AdminError {
  return new AdminError('CONVERSATION_NOT_FOUND', `no conversation ${conversationId}`);
}
