import type { FastifyRequest } from 'fastify';
import { verifySlackSignature, type SlackParseContext } from '@switchboard/platforms';

export interface SlackRouteOptions {
  signingSecret: string;
  context: SlackParseContext;
}

/** Slack's v0 signature over the raw body, read from the request's headers: one check for the events and the interactions URL. */
export function verifySlackRequest(request: FastifyRequest, raw: Buffer, signingSecret: string) {
  return verifySlackSignature({
    signingSecret,
    timestamp: request.headers['x-slack-request-timestamp'],
    signature: request.headers['x-slack-signature'],
    rawBody: raw,
  });
}
