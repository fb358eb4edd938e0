/**
 * What one user action may cost, counted by test/e2e/turn-cost.e2e.test.ts
 * (issue 31, "a guard that cannot be fooled by a noisy machine"). Counts are
 * deterministic where times are not, so they live in `npm test` and times in
 * `npm run bench`. A change that adds (or removes) a statement, a Redis
 * command or a platform call fails that test until this file says so, in the
 * same commit, with the reason. Every process counts: gateway, worker and
 * what their Lua scripts run inside Redis.
 *
 * Measured with production defaults (STREAMING on, STATUS_REACTIONS on, an
 * instant model) on an existing conversation, from the webhook to the
 * moment every counter stops moving (delivery done, the queue job settled).
 * STATUS_REACTION_AFTER_MS is 30 s there (1 s by default) so that no turn
 * measured is slow enough for its reactions on a loaded machine: an instant
 * turn makes none; one past the delay adds 👀 and ✅, two calls.
 */

export interface CostBudget {
  /** Top-level SQL statements sent by any process (pg_stat_statements, track=top). */
  statements: number;
  /** Redis commands of every client, commands run by Lua scripts included (INFO commandstats). */
  redisCommands: number;
  /** Telegram Bot API calls by method. */
  platformCalls: Record<string, number>;
  /** Chat-completions requests (summariser included). */
  modelRequests: number;
}

export interface ScenarioBudget {
  /** Why each count is what it is: the line to read before changing it. */
  why: string[];
  /** Usually one; more only where the system's own timing picks between two exact paths (said in `why`). */
  variants: CostBudget[];
}

export const turnCostBudget = {
  ordinaryTurn: {
    why: [
      'SQL 6: the gateway stores the event (store-inbound: rate gate, conversation upsert, insert, one statement);',
      'the worker reads the whole state (one statement), writes the running-turn row (beginTurn), commits',
      'transcript + inbound done + outbox + turn end (commitTurn, one statement), marks the outbox row sent,',
      'and checks for more input before it releases the lease.',
      'Redis 73 (docs/benchmarks.md, "Redis commands of an ordinary turn", has them one by one): the gateway\'s',
      'rate window (one script, INCRBY; 2), its signal script finding no lease (2) and BullMQ\'s add (10); in the',
      'worker BullMQ\'s fetch of the job (10), the lease take (SET NX), two empty fetches and their BZPOPMIN that',
      'BullMQ\'s own wake-up marker causes (16), two lifecycle publishes, the lease release script (3) and',
      'BullMQ\'s completion with its look for a next job (27). Until issue 31\'s cut 76: the rate window was a',
      'MULTI/INCRBY/EXPIRE/EXEC transaction (now the EXPIRE only opens a window), and completed jobs were also',
      'trimmed by age (one more range read per completion; the count alone bounds them).',
      'The same on a Redis Cluster (turn-cost-cluster.e2e, summed over the masters; the cluster\'s own upkeep,',
      'CLUSTER SLOTS and REPLCONF ACK, left out): a cluster adds no command to a turn.',
      'Platform: one sendMessage. No reaction: an answer ready within STATUS_REACTION_AFTER_MS leaves none (its',
      'reply says it was seen); until issue 31 👀 and ✅ went out on every turn, a tenth of its worker CPU.',
    ],
    variants: [{ statements: 6, redisCommands: 73, platformCalls: { sendMessage: 1 }, modelRequests: 1 }],
  },
  interruptedTurn: {
    why: [
      'A slow answer interrupted by a second message (busy mode interrupt): two stores, one state read per',
      'turn taken, two running-turn rows, two commits, one outbox row sent (the interrupted turn says nothing).',
      'Two model requests (the aborted one and the answer). No reaction: neither turn ran past STATUS_REACTION_AFTER_MS.',
      'Two exact paths, picked by timing: the second message\'s wake-up job runs either while the drain loop',
      'still holds the lease (it finds the lease taken and ends) or just after it released it (one more',
      'pending check and one more lease take / release: +1 statement, +28 Redis commands).',
      'Issue 31\'s cut of the rate window (2 per message) and of the age trim (1 per completed job): 149 → 143,',
      '177 → 171.',
    ],
    variants: [
      { statements: 10, redisCommands: 143, platformCalls: { sendMessage: 1 }, modelRequests: 2 },
      { statements: 11, redisCommands: 171, platformCalls: { sendMessage: 1 }, modelRequests: 2 },
    ],
  },
  statusCommand: {
    why: [
      'SQL 7: the store; the state read, then read again after the command (handle-command) and the session',
      'row for /status\'s figures; the commit of the command\'s answer, the outbox row sent, the pending check.',
      'No model request, no reaction (a command is not a turn of the agent).',
      'Redis 69: the ordinary turn\'s 73 less the signal script (a command other than /stop signals nothing)',
      'and the two lifecycle publishes (no turn starts); 72 before issue 31\'s cut (the rate window, the age',
      'trim of completed jobs).',
    ],
    variants: [{ statements: 7, redisCommands: 69, platformCalls: { sendMessage: 1 }, modelRequests: 0 }],
  },
  compactCommand: {
    why: [
      'SQL 13 for a /compact that summarises: the store; the state read before and after the command; the',
      'conversation row read twice and the session row once (drizzle queries of compress-session and',
      'handle-command); the advisory lock and its release on the reserved connection; the session\'s messages;',
      'the compression commit (one statement); the answer\'s commit, the outbox row sent, the pending check.',
      'One model request: the summariser.',
      'Redis 70: as /status, and the session.compressed publish; 73 before issue 31\'s cut.',
    ],
    variants: [{ statements: 13, redisCommands: 70, platformCalls: { sendMessage: 1 }, modelRequests: 1 }],
  },
  triggeredTurn: {
    why: [
      'One signed call of POST /hooks/{name} into a Telegram conversation that already had a turn of its own',
      '(issue 34, "a capability\'s cost is in the budget test"), answered once.',
      'SQL 7: the ordinary turn\'s 6 and the hook\'s conversation lookup (findHookConversation: one read by',
      'primary key, for the key to store under, the chat to answer in and whether it is suspended; a platform\'s',
      'webhook carries its chat, a hook names only a conversation id). Then as a message: the store (rate gate,',
      'conversation upsert, insert; one statement), the state read, beginTurn, commitTurn, the outbox row sent,',
      'the pending check.',
      'Redis 74: the ordinary turn\'s 73, command for command, and one EXPIRE: the call is the hook\'s first in',
      'its minute, so its rate window (its own user, hook:<name>) opens; the ordinary turn\'s sender had opened',
      'theirs with the warm-up message (countInWindowScript sets the expiry only when its INCRBY made the key).',
      'Nothing else differs: the same signal script, BullMQ add, worker fetch, lease, publishes and completion.',
      'Platform: one sendMessage. One model request. No reaction: the turn ends within STATUS_REACTION_AFTER_MS.',
    ],
    variants: [{ statements: 7, redisCommands: 74, platformCalls: { sendMessage: 1 }, modelRequests: 1 }],
  },
  scheduledTurn: {
    why: [
      'One occurrence of a one-off schedule in a Telegram conversation that already had a turn of its own (issue 34,',
      'point 2), from the moment its delayed job falls due to the reply; making the schedule (its insert, its',
      'delayed job) is before the measurement.',
      'SQL 8: the ordinary turn\'s 6 and the occurrence\'s two: its read of the schedule joined to its conversation',
      '(loadOccurrenceState: status, chat and key in one statement) and the record of its outcome (recordOccurrence:',
      'runs, last outcome, the one-off ended, in one update). The store is the ordinary one-statement',
      'storeInboundEvent, made by the worker instead of the gateway; then the state read, beginTurn, commitTurn, the',
      'outbox row sent, the pending check.',
      'Redis 130: the ordinary turn\'s 73 less the gateway\'s rate window (2: an occurrence is no user\'s message and',
      'counts in no window) is 71, the same signal script, BullMQ add of the wake-up, worker fetch, lease,',
      'publishes and completion; and 59 for the occurrence\'s own job in the `schedules` queue, which a message does',
      'not have: the schedules worker woken at the due time (BZPOPMIN), the job promoted from delayed (its one ZREM),',
      'fetched, locked and completed with BullMQ\'s look for a next job, about a second turn job\'s fetch and',
      'completion. Against the ordinary turn, command by command: bzpopmin +2, del +4, evalsha +3, exists +1, get +1,',
      'hget +2, hgetall +1, hincrby +2, hmget +5, hmset +1, hset +2, incrby -1, llen +2, lpush +1, lrem +1,',
      'rpoplpush +4, scard +1, set +1, srem +1, xadd +4, xtrim +1, zadd +3, zcard +2, zpopmin +3, zrange +3,',
      'zrangebyscore +4, zrem +1, zremrangebyrank +1, zrevrange +1.',
      'The one-off falls due 1.5 s after it is made, after the quiet wait and the zeroing: an idle BullMQ worker',
      'wakes every 5 s (drainDelay), and a lead past that adds its wake-up (8 more).',
      'Platform: one sendMessage. One model request. No reaction: the turn ends within STATUS_REACTION_AFTER_MS.',
    ],
    variants: [{ statements: 8, redisCommands: 130, platformCalls: { sendMessage: 1 }, modelRequests: 1 }],
  },
} satisfies Record<string, ScenarioBudget>;
