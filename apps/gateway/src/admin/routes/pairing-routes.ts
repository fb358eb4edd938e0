import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { normalisePairingCode, pairingNotices } from '@switchboard/core';
import { approvePairing, denyPairing, listPairedUsers, listPendingPairings, revokePairedUser } from '@switchboard/db';
import { enqueueWake } from '@switchboard/queue';
import { auditAction, type AdminContext } from '../admin-context.ts';
import { AdminError } from '../admin-errors.ts';
import { errors } from '../schemas/common-schemas.ts';
import { ApproveResult, CodeParams, DenyResult, PairedUserList, PairedUserParams, PairingList, RevokeResult, viewPairedUser, viewPairing } from '../schemas/pairing-schemas.ts';

const listLimit = 200;
const tags = ['pairing'];

/**
 * Pairing (DM_POLICY=pairing, docs/admin.md "Pairing"): pending codes,
 * approving or denying one, paired users, revoking one. Approve, deny and revoke are audited
 * in their own transaction, refusals included; the user's welcome is queued
 * in the approval's transaction and delivered by a worker.
 */
export function registerPairingRoutes(scope: FastifyInstance, ctx: AdminContext): void {
  registerPendingPairingListRoute(scope, ctx);
  registerApproveRoute(scope, ctx);
  registerDenyRoute(scope, ctx);
  registerPairedUserListRoute(scope, ctx);
  registerRevokeRoute(scope, ctx);
}

function registerPendingPairingListRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/pairings',
    { schema: { tags, summary: `Pending pairing codes an operator can approve, oldest first (at most ${listLimit})`, response: { 200: PairingList, ...errors() } } },
    async () => ({ items: (await listPendingPairings(ctx.db, listLimit)).map(viewPairing) }),
  );
}

function registerApproveRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/pairings/:code/approve',
    {
      schema: {
        tags,
        summary: 'Approve a pending code: the user is allowlisted (paired) and told so. Unknown, malformed or already approved: 404 PAIRING_NOT_FOUND; expired: 410 PAIRING_EXPIRED; nothing changes either way',
        params: CodeParams,
        response: { 200: ApproveResult, ...errors(400, 404, 410) },
      },
    },
    async (request) => {
      const code = normalisePairingCode(request.params.code);
      const target = `pairing:${code ?? 'invalid'}`;
      if (!code) {
        await auditAction(ctx, ctx.db, request, { action: 'pairing.approve', target, result: 'PAIRING_NOT_FOUND' });
        throw new AdminError('PAIRING_NOT_FOUND', 'no pending pairing has this code');
      }
      const outcome = await approvePairing(ctx.db, {
        code,
        actor: request.adminActor,
        text: pairingNotices.approved,
        record: (tx, result) =>
          auditAction(ctx, tx, request, {
            action: 'pairing.approve',
            target,
            result: result.kind === 'approved' ? 'ok' : result.kind === 'expired' ? 'PAIRING_EXPIRED' : 'PAIRING_NOT_FOUND',
            detail: result.kind === 'not_found' ? {} : { platform: result.platform, userId: result.userId },
          }),
      });
      if (outcome.kind === 'not_found') throw new AdminError('PAIRING_NOT_FOUND', 'no pending pairing has this code');
      if (outcome.kind === 'expired') throw new AdminError('PAIRING_EXPIRED', 'this pairing code has expired; the user can ask again for a new one');
      await enqueueWake(ctx.queue, { conversationId: outcome.conversationId, inboundEventId: null, reason: 'outbox' }, `paired-${outcome.conversationId}-${Date.now()}`).catch((err: unknown) =>
        ctx.log.warn({ err, conversationId: outcome.conversationId }, 'pairing welcome queued but not woken; the recovery sweep delivers it'),
      );
      return { ok: true as const, platform: outcome.platform, userId: outcome.userId };
    },
  );
}

function registerDenyRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().post(
    '/pairings/:code/deny',
    {
      schema: {
        tags,
        summary: 'Deny a pending code: it stops working, its slot is free, and the user gets no new code for a day (their messages get the one-line refusal). Unknown, malformed or no longer pending: 404 PAIRING_NOT_FOUND, nothing changes',
        params: CodeParams,
        response: { 200: DenyResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const code = normalisePairingCode(request.params.code);
      const target = `pairing:${code ?? 'invalid'}`;
      const outcome = code
        ? await denyPairing(ctx.db, {
            code,
            actor: request.adminActor,
            record: (tx, result) =>
              auditAction(ctx, tx, request, {
                action: 'pairing.deny',
                target,
                result: result.kind === 'denied' ? 'ok' : 'PAIRING_NOT_FOUND',
                detail: result.kind === 'denied' ? { platform: result.platform, userId: result.userId } : {},
              }),
          })
        : await auditAction(ctx, ctx.db, request, { action: 'pairing.deny', target, result: 'PAIRING_NOT_FOUND' }).then(() => ({ kind: 'not_found' as const }));
      if (outcome.kind === 'not_found') throw new AdminError('PAIRING_NOT_FOUND', 'no pending pairing has this code');
      return { ok: true as const, platform: outcome.platform, userId: outcome.userId };
    },
  );
}

function registerPairedUserListRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().get(
    '/paired-users',
    { schema: { tags, summary: `Users allowlisted through pairing, newest first (at most ${listLimit}); the environment's *_ALLOWED_USERS are not listed`, response: { 200: PairedUserList, ...errors() } } },
    async () => ({ items: (await listPairedUsers(ctx.db, listLimit)).map(viewPairedUser) }),
  );
}

function registerRevokeRoute(scope: FastifyInstance, ctx: AdminContext): void {
  scope.withTypeProvider<TypeBoxTypeProvider>().delete(
    '/paired-users/:platform/:userId',
    {
      schema: {
        tags,
        summary: 'Revoke a paired user: their next direct message is an unknown user\'s again (under DM_POLICY=pairing, a new code). 404 PAIRED_USER_NOT_FOUND when not paired',
        params: PairedUserParams,
        response: { 200: RevokeResult, ...errors(400, 404) },
      },
    },
    async (request) => {
      const { platform, userId } = request.params;
      const outcome = await revokePairedUser(ctx.db, {
        platform,
        userId,
        record: (tx, result) =>
          auditAction(ctx, tx, request, {
            action: 'pairing.revoke',
            target: `paired-user:${platform}:${userId}`,
            result: result.kind === 'revoked' ? 'ok' : 'PAIRED_USER_NOT_FOUND',
            detail: result.kind === 'revoked' ? { code: result.code, approvedBy: result.approvedBy } : {},
          }),
      });
      if (outcome.kind === 'not_found') throw new AdminError('PAIRED_USER_NOT_FOUND', `${platform} user ${userId} is not paired`);
      return { ok: true as const, platform, userId };
    },
  );
}
