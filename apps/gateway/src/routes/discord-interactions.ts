import type { FastifyInstance } from 'fastify';
import { parseDiscordInteraction, PlatformError, verifyDiscordSignature } from '@switchboard/platforms';
import { answerDiscordPress } from '../approvals/answer-press.ts';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { ingestInbound } from '../ingress/ingest-inbound.ts';

export interface DiscordInteractionsOptions {
  /** The application's public key (hex), from the Developer Portal. */
  publicKey: string;
  /** Conversations are keyed by it; else by the application id each interaction names. */
  applicationId?: string;
}

/** Interaction response types (Discord interactions docs). */
const response = { pong: 1, channelMessage: 4, deferredChannelMessage: 5 } as const;
/** Message flag: only the invoking user sees it. */
const ephemeral = 64;

/**
 * `POST /webhooks/discord/interactions`, Discord's Interactions Endpoint URL.
 * Registered as an encapsulated plugin with its own JSON parser that keeps
 * the body as the raw string: the Ed25519 signature covers the exact bytes,
 * and a re-serialised body would not verify. Verify first (401 and nothing
 * stored on failure; Discord sends deliberately bad signatures to check),
 * PING → PONG, a slash command → stored as the text `/<name> <args>` and
 * answered "deferred" at once (Discord wants an answer within 3 s); the reply
 * later edits that deferred response through the interaction token.
 */
export async function registerDiscordInteractions(app: FastifyInstance, deps: IngressDeps, options: DiscordInteractionsOptions): Promise<void> {
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    // The bytes, not a string: decoding and re-encoding would turn a byte that is not UTF-8 into U+FFFD, and a rightly
    // signed body would then fail its signature (found by the fuzzer, issue 17).
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    scope.post('/webhooks/discord/interactions', async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : typeof request.body === 'string' ? request.body : '';
      const verdict = verifyDiscordSignature({
        publicKeyHex: options.publicKey,
        signatureHex: request.headers['x-signature-ed25519'],
        timestamp: request.headers['x-signature-timestamp'],
        rawBody,
      });
      if (!verdict.ok) {
        request.log.warn({ route: 'discord-interactions', outcome: 'unauthorized', reason: verdict.reason }, 'interaction rejected: bad signature');
        return reply.code(401).send({ ok: false, error: 'unauthorized' });
      }

      const ingested = await ingestInbound(deps, () => parseDiscordInteraction(readJson(rawBody), { applicationId: options.applicationId }));
      switch (ingested.kind) {
        case 'malformed':
          request.log.warn({ route: 'discord-interactions', reason: ingested.error.message }, 'interaction rejected: malformed');
          return reply.code(400).send({ ok: false, error: 'INVALID_PAYLOAD', message: ingested.error.message });
        case 'skipped':
          if (ingested.parsed.kind === 'ping') return { type: response.pong };
          if (ingested.parsed.kind === 'button') {
            try {
              return await answerDiscordPress(deps, ingested.parsed.press);
            } catch (err) {
              request.log.error({ route: 'discord-interactions', err }, 'button press not answered');
              return reply.code(503).send({ ok: false, error: 'STORE_FAILED' });
            }
          }
          request.log.info({ route: 'discord-interactions', reason: ingested.parsed.reason }, 'interaction not supported');
          return { type: response.channelMessage, data: { content: 'This interaction is not supported.', flags: ephemeral } };
        case 'accepted':
          // Discord does not retry interactions, but a deferred answer with no follow-up would leave the user waiting.
          if (ingested.outcome === 'invalid_input') return { type: response.channelMessage, data: { content: 'This command could not be read.', flags: ephemeral } };
          break;
        case 'not_accepted':
          if (ingested.error.code === 'STORE_FAILED') {
            // Discord does not retry interactions; the user sees "interaction failed" and can run it again.
            request.log.error({ route: 'discord-interactions', code: ingested.error.code, err: ingested.error.cause }, 'interaction not stored');
            return reply.code(503).send({ ok: false, error: ingested.error.code });
          }
          // Stored but not enqueued: the sweep hands it to a worker once Redis is back.
          request.log.warn({ route: 'discord-interactions', code: ingested.error.code, err: ingested.error.cause }, 'interaction stored, not enqueued');
          break;
      }
      return { type: response.deferredChannelMessage };
    });
  });
}

/** The body as JSON; a body that is not JSON is malformed like one that is not an interaction. */
function readJson(rawBody: Buffer | string): unknown {
  try {
    return JSON.parse(rawBody.toString('utf8')) as unknown;
  } catch (error) {
    if (error instanceof SyntaxError) throw new PlatformError('INVALID_PAYLOAD', `body is not JSON: ${error.message}`, { cause: error });
    throw error;
  }
}
