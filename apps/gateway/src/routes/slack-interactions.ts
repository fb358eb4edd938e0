import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseSlackInteraction, PlatformError } from '@switchboard/platforms';
import { answerSlackPress } from '../approvals/answer-press.ts';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { acceptParsed } from '../ingress/ingest-inbound.ts';
import { verifySlackRequest, type SlackRouteOptions } from './slack-request.ts';

/**
 * `POST /webhooks/slack/interactions`, the app's Interactivity Request URL
 * (Slack interactivity docs): a form with one field, `payload`, holding JSON,
 * signed with the same v0 signature as events and verified the same way
 * (401 and nothing done on failure). A `block_actions` button press (an
 * approval answer) is decided before the 200; a Cancel button under a
 * `/schedules` list is stored, like a message, before it; any other
 * interaction is acknowledged and ignored. Also reached from the events URL, for apps that
 * give Slack one URL for both.
 */
export async function handleSlackInteraction(request: FastifyRequest, reply: FastifyReply, deps: IngressDeps, options: SlackRouteOptions) {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const verified = verifySlackRequest(request, raw, options.signingSecret);
  if (!verified.ok) {
    request.log.warn({ route: 'slack-interactions', outcome: 'unauthorized', reason: verified.reason }, 'slack interaction rejected: bad signature');
    return reply.code(401).send({ ok: false, error: 'unauthorized' });
  }
  let parsed;
  try {
    const payload = new URLSearchParams(raw.toString('utf8')).get('payload');
    if (payload === null) throw new PlatformError('INVALID_PAYLOAD', 'form body without payload');
    parsed = parseSlackInteraction(payload);
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    request.log.warn({ route: 'slack-interactions', reason: error.message }, 'slack interaction rejected: malformed');
    return reply.code(400).send({ ok: false, error: 'INVALID_PAYLOAD', message: error.message });
  }
  if (parsed.kind === 'message') {
    // A Cancel button (docs/schedules.md, "In chat"): stored as the command it stands for, answered in the thread like the typed one.
    const accepted = await acceptParsed(deps, parsed.message);
    if (accepted.kind === 'not_accepted' && accepted.error.code === 'STORE_FAILED') {
      request.log.error({ route: 'slack-interactions', code: accepted.error.code, err: accepted.error.cause }, 'button press not stored');
      return reply.code(503).send({ ok: false, error: accepted.error.code });
    }
    return reply.code(200).send();
  }
  if (parsed.kind !== 'button') return reply.code(200).send();
  try {
    await answerSlackPress(deps, parsed.press, deps.log);
  } catch (err) {
    request.log.error({ route: 'slack-interactions', err }, 'button press not answered');
    return reply.code(503).send({ ok: false, error: 'STORE_FAILED' });
  }
  // Slack reads nothing from a block_actions answer but its status.
  return reply.code(200).send();
}
