import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessPolicy } from '@switchboard/core';
import { useTestDbClient } from '@switchboard/db/testing';
import { createRedisPrefix, redisUrl } from '@switchboard/harness/test-env';
import { createLogger } from '@switchboard/logger';
import type { InboundMessage } from '@switchboard/platforms';
import { createTurnQueue, type TurnQueue } from '@switchboard/queue';
import { admissionNotices, admitInbound, exemptRateFactor, refusedAnswerMaySpeak, type AdmissionDeps } from './admission.ts';

// The decisions alone, on a real Redis (the rate window and the told-once
// marks) and a real Postgres (where a refusal notice is queued). What the
// refused user sees through the real processes is test/e2e/access.e2e.test.ts;
// this covers the branches that e2e cannot reach cheaply (the /stop and
// answer exemption and its own cap, a limit of 0, Redis failing open, per-user windows).

const db = useTestDbClient();
const openPolicy: AccessPolicy = { dmPolicy: 'open', groupPolicy: 'open', allowedUsers: {}, allowedDiscordRoles: new Set() };
let redis: Redis;
const queues: TurnQueue[] = [];

beforeAll(() => {
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  redis?.disconnect();
});

/** Deps under their own Redis prefix, so no case sees another's windows or marks. */
function depsWith(overrides: Partial<AdmissionDeps> = {}): AdmissionDeps {
  const redisPrefix = createRedisPrefix();
  const queue = createTurnQueue(redis, redisPrefix);
  queues.push(queue);
  return { db: db.client.db, queue, redis, redisPrefix, log: createLogger('admission-test', 'silent'), policy: openPolicy, rateLimitPerMinute: 0, ...overrides };
}

let nextChat = 9000;
function messageFrom(userId: string, options: { chatId?: string; direct?: boolean; platform?: InboundMessage['platform']; roles?: string[] } = {}): InboundMessage {
  const chatId = options.chatId ?? String(++nextChat);
  const platform = options.platform ?? 'telegram';
  return {
    platform,
    eventId: `e-${Math.random()}`,
    address: { platform, accountId: 'bot', chatId, threadId: '', userScope: options.direct === false ? userId : '' },
    userId,
    text: 'hello',
    roles: options.roles,
    replyTarget: { chat_id: Number(chatId) },
  };
}

async function noticesIn(chatId: string): Promise<string[]> {
  const rows = await db.client.db.$client<{ text: string }[]>`
    select o.text from outbox o join conversations c on c.id = o.conversation_id where c.chat_id = ${chatId} order by o.id`;
  return rows.map((row) => row.text);
}

describe('admitInbound: access', () => {
  it('allows anyone where the policy is open, and queues nothing', async () => {
    const message = messageFrom('7');
    expect(await admitInbound(depsWith(), message, false)).toBe('allow');
    expect(await noticesIn(message.address.chatId)).toEqual([]);
  });

  it('allows an allowlisted user in an allowlist-only direct chat', async () => {
    const deps = depsWith({ policy: { ...openPolicy, dmPolicy: 'allowlist', allowedUsers: { telegram: new Set(['42']) } } });
    expect(await admitInbound(deps, messageFrom('42'), false)).toBe('allow');
  });

  it('allows a Discord member through an allowed role', async () => {
    const deps = depsWith({ policy: { ...openPolicy, groupPolicy: 'allowlist', allowedDiscordRoles: new Set(['ops']) } });
    expect(await admitInbound(deps, messageFrom('5', { platform: 'discord', direct: false, roles: ['ops'] }), false)).toBe('allow');
    expect(await admitInbound(deps, messageFrom('5', { platform: 'discord', direct: false, roles: ['guest'] }), false)).toBe('not_allowed');
  });

  it('refuses anyone else, tells them once, and wakes the conversation to deliver it', async () => {
    const deps = depsWith({ policy: { ...openPolicy, dmPolicy: 'allowlist' } });
    const message = messageFrom('8');
    expect(await admitInbound(deps, message, false)).toBe('not_allowed');
    expect(await admitInbound(deps, { ...message, eventId: 'again' }, false)).toBe('not_allowed');
    expect(await noticesIn(message.address.chatId)).toEqual([admissionNotices.not_allowed]);
    const wakes = await deps.queue.getJobs(['waiting', 'prioritized', 'delayed']);
    expect(wakes.map((job) => job.data)).toEqual([expect.objectContaining({ inboundEventId: null, reason: 'outbox' })]);
  });

  it('refuses /stop from a user who is not allowed: the exemption is from the rate limit only', async () => {
    const deps = depsWith({ policy: { ...openPolicy, groupPolicy: 'allowlist' } });
    expect(await admitInbound(deps, messageFrom('9', { direct: false }), true)).toBe('not_allowed');
  });
});

describe('admitInbound: the per-user rate limit', () => {
  it('refuses messages past the limit within a minute and tells the user once', async () => {
    const deps = depsWith({ rateLimitPerMinute: 2 });
    const message = messageFrom('11');
    const verdicts = [];
    for (let i = 0; i < 4; i++) verdicts.push(await admitInbound(deps, { ...message, eventId: `m${i}` }, false));
    expect(verdicts).toEqual(['allow', 'allow', 'rate_limited', 'rate_limited']);
    expect(await noticesIn(message.address.chatId)).toEqual([admissionNotices.rate_limited]);
    // The window is the minute from the first message: set once, never left without an expiry (issue 31's one-command count).
    const ttl = await redis.ttl(`${deps.redisPrefix}:rate:telegram:bot:11`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('counts each user on their own, even in the same chat', async () => {
    const deps = depsWith({ rateLimitPerMinute: 1 });
    const chatId = String(++nextChat);
    expect(await admitInbound(deps, messageFrom('12', { chatId, direct: false }), false)).toBe('allow');
    expect(await admitInbound(deps, messageFrom('12', { chatId, direct: false }), false)).toBe('rate_limited');
    expect(await admitInbound(deps, messageFrom('13', { chatId, direct: false }), false)).toBe('allow');
  });

  it('lets /stop and approval answers through past the message rate, up to their own looser cap (issue 30, finding 5)', async () => {
    const deps = depsWith({ rateLimitPerMinute: 1 });
    const message = messageFrom('14');
    expect(await admitInbound(deps, message, false)).toBe('allow');
    expect(await admitInbound(deps, message, false)).toBe('rate_limited');
    for (let i = 0; i < exemptRateFactor; i++) expect(await admitInbound(deps, message, true)).toBe('allow');
    expect(await admitInbound(deps, message, true)).toBe('rate_limited');
  });

  it('an answer that decided nothing speaks once a minute, and counts as a message', async () => {
    const deps = depsWith({ rateLimitPerMinute: 2 });
    const message = messageFrom('16');
    expect(await refusedAnswerMaySpeak(deps, message)).toBe(true);
    expect(await refusedAnswerMaySpeak(deps, message)).toBe(false);
    // Two counted already: the next message is over the rate, and the user is told so once.
    expect(await admitInbound(deps, message, false)).toBe('rate_limited');
    expect(await refusedAnswerMaySpeak(deps, message)).toBe(false);
    expect(await noticesIn(message.address.chatId)).toEqual([admissionNotices.rate_limited]);
  });

  it('weighs a message with files one more per file (issue 30, finding 3)', async () => {
    const deps = depsWith({ rateLimitPerMinute: 3 });
    const message = messageFrom('19');
    const withFiles = { ...message, attachments: [{ kind: 'document' as const, ref: 'F1', mime: 'text/plain', name: 'a.txt', size: 10 }, { kind: 'document' as const, ref: 'F2', mime: 'text/plain', name: 'b.txt', size: 10 }] };
    expect(await admitInbound(deps, withFiles, false)).toBe('allow');
    expect(await admitInbound(deps, message, false)).toBe('rate_limited');
  });

  it('limits nobody when the limit is 0', async () => {
    const deps = depsWith({ rateLimitPerMinute: 0 });
    const message = messageFrom('15');
    for (let i = 0; i < 5; i++) expect(await admitInbound(deps, message, false)).toBe('allow');
  });

  it('opens the window with the first message and lets it expire after a minute', async () => {
    const deps = depsWith({ rateLimitPerMinute: 5 });
    const message = messageFrom('16');
    await admitInbound(deps, message, false);
    const key = `${deps.redisPrefix}:rate:telegram:bot:16`;
    const ttl = await redis.ttl(key);
    await admitInbound(deps, message, false);
    // EXPIRE NX: a later message does not push the window's end back.
    expect(ttl).toBeGreaterThan(55);
    expect(await redis.ttl(key)).toBeLessThanOrEqual(ttl);
    expect(await redis.get(key)).toBe('2');
  });

  it('admits when Redis is unavailable: the limit is a courtesy, storing is not', async () => {
    // Never connected and no offline queue: every command fails at once, as with Redis down.
    const down = new Redis(redisUrl(), { lazyConnect: true, enableOfflineQueue: false });
    try {
      const deps = depsWith({ redis: down, rateLimitPerMinute: 1 });
      const message = messageFrom('17');
      for (let i = 0; i < 3; i++) expect(await admitInbound(deps, message, false)).toBe('allow');
    } finally {
      down.disconnect();
    }
  });

  it('still refuses when the notice cannot be queued', async () => {
    const down = new Redis(redisUrl(), { lazyConnect: true, enableOfflineQueue: false });
    try {
      const deps = depsWith({ redis: down, policy: { ...openPolicy, dmPolicy: 'allowlist' } });
      const message = messageFrom('18');
      expect(await admitInbound(deps, message, false)).toBe('not_allowed');
      expect(await noticesIn(message.address.chatId)).toEqual([]);
    } finally {
      down.disconnect();
    }
  });
});

describe('admitInbound: DM_POLICY=pairing', () => {
  it('offers codes in DMs only, up to 3 pending per platform; a 4th user evicts the oldest code instead of being refused (issue 30, finding 7)', async () => {
    const deps = depsWith({ policy: { ...openPolicy, dmPolicy: 'pairing', groupPolicy: 'allowlist' } });
    const group = messageFrom('U-group', { platform: 'slack', direct: false });
    expect(await admitInbound(deps, group, false)).toBe('not_allowed');
    expect(await noticesIn(group.address.chatId)).toEqual([admissionNotices.not_allowed]);

    const strangers = ['U-1', 'U-2', 'U-3'].map((user) => messageFrom(user, { platform: 'slack' }));
    for (const message of strangers) expect(await admitInbound(deps, message, false)).toBe('not_allowed');
    for (const message of strangers) expect(await noticesIn(message.address.chatId)).toEqual([expect.stringMatching(/pairing code [A-Z2-9]{8} /)]);

    const fourth = messageFrom('U-4', { platform: 'slack' });
    expect(await admitInbound(deps, fourth, false)).toBe('not_allowed');
    expect(await admitInbound(deps, { ...fourth, eventId: 'again' }, false)).toBe('not_allowed');
    expect(await noticesIn(fourth.address.chatId)).toEqual([expect.stringMatching(/pairing code [A-Z2-9]{8} /)]);
    const rows = await db.client.db.$client<{ user_id: string; status: string }[]>`select user_id, status from pairings where platform = 'slack' order by id`;
    expect(rows.map((r) => [r.user_id, r.status])).toEqual([['U-1', 'evicted'], ['U-2', 'pending'], ['U-3', 'pending'], ['U-4', 'pending']]);
  });
});
