import { generateKeyPairSync, sign } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@switchboard/logger';
import type { IngressDeps } from '../ingress/accept-inbound.ts';
import { registerDiscordInteractions } from './discord-interactions.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const publicKeyHex = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');

// Every case here is answered before anything is stored; a store attempt would throw on these stubs.
const unreachable = new Proxy({}, { get: () => () => Promise.reject(new Error('nothing may be stored')) });
const deps = { db: unreachable, queue: unreachable, redis: unreachable, redisPrefix: 't', maxQueuedInput: 1, log: createLogger('test', 'silent') } as unknown as IngressDeps;

function signedHeaders(body: string, timestamp = String(Math.floor(Date.now() / 1000))) {
  return {
    'content-type': 'application/json',
    'x-signature-timestamp': timestamp,
    'x-signature-ed25519': sign(null, Buffer.from(timestamp + body), privateKey).toString('hex'),
  };
}

describe('registerDiscordInteractions', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    // The app's own JSON parser stays as it is for every other route.
    app.post('/echo', async (request) => request.body);
    await registerDiscordInteractions(app, deps, { publicKey: publicKeyHex });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const post = (body: string, headers: Record<string, string>) => app.inject({ method: 'POST', url: '/webhooks/discord/interactions', payload: body, headers });

  it('answers a signed PING with PONG', async () => {
    const body = JSON.stringify({ id: '1', application_id: '2', type: 1, token: 't', version: 1 });
    const response = await post(body, signedHeaders(body));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ type: 1 });
  });

  it('verifies the exact bytes received, whitespace included', async () => {
    const body = '{ "id": "1", "application_id": "2", "type": 1, "token": "t" }';
    expect((await post(body, signedHeaders(body))).json()).toEqual({ type: 1 });
  });

  it('verifies the exact bytes received, bytes that are not UTF-8 included', async () => {
    // Found by the fuzzer (issue 17): read as a string, 0xFF became U+FFFD and the right signature no longer matched.
    const body = Buffer.concat([Buffer.from('{"id":"1","application_id":"2","type":1,"token":"t","locale":"'), Buffer.from([0xff, 0xc0, 0x80]), Buffer.from('"}')]);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = { 'content-type': 'application/json', 'x-signature-timestamp': timestamp, 'x-signature-ed25519': sign(null, Buffer.concat([Buffer.from(timestamp), body]), privateKey).toString('hex') };
    const response = await app.inject({ method: 'POST', url: '/webhooks/discord/interactions', payload: body, headers });
    expect(response.json()).toEqual({ type: 1 });
  });

  it('answers 401 to a bad or missing signature before reading the body', async () => {
    const body = JSON.stringify({ id: '1', application_id: '2', type: 1, token: 't' });
    const headers = signedHeaders(body);
    expect((await post(`${body} `, headers)).statusCode).toBe(401);
    expect((await post(body, { ...headers, 'x-signature-timestamp': String(Number(headers['x-signature-timestamp']) + 1) })).statusCode).toBe(401);
    expect((await post(body, { 'content-type': 'application/json' })).statusCode).toBe(401);
    expect((await post('{not json', { 'content-type': 'application/json' })).statusCode).toBe(401);
    // Rightly signed, but outside the ±5 minute window: a replay.
    expect((await post(body, signedHeaders(body, '1700000000'))).statusCode).toBe(401);
  });

  it('answers 400 to a signed body that is not JSON or not an interaction', async () => {
    for (const body of ['{not json', '{"hello":"world"}', '{"id":"1","application_id":"2","type":2,"token":"t","user":{"id":"3"}}']) {
      const response = await post(body, signedHeaders(body));
      expect(response.statusCode, body).toBe(400);
    }
  });

  it('answers an unsupported interaction type with an ephemeral note', async () => {
    const body = JSON.stringify({ id: '1', application_id: '2', type: 5, token: 't', channel_id: '4', user: { id: '3' } });
    expect((await post(body, signedHeaders(body))).json()).toEqual({ type: 4, data: { content: 'This interaction is not supported.', flags: 64 } });
  });

  it('leaves the JSON parser of other routes alone', async () => {
    const response = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
    expect(response.json()).toEqual({ a: 1 });
  });
});
