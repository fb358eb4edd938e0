import { isInsideDirectory, isWorkerSecretName } from '@switchboard/core';
import { z } from 'zod';
import { modelFallbacks } from './model-fallbacks.ts';
import {
  adminCookieSecure,
  agentRuntime,
  busyInputMode,
  directory,
  pathList,
  hostPortList,
  intInRange,
  logLevel,
  nonNegativeInt,
  onOff,
  optionalSecret,
  port,
  positiveInt,
  postgresUrl,
  ratio,
  redisPrefix,
  redisUrl,
  telegramSecret,
  telegramToken,
  trustProxy,
  url,
  userKeyList,
} from './fields.ts';
import { describeShape } from './meanings.ts';

const shared = {
  DATABASE_URL: postgresUrl,
  /** A direct (session-mode) connection for what needs a session; unset: DATABASE_URL (docs/services.md, "Postgres behind PgBouncer"). */
  DATABASE_SESSION_URL: postgresUrl.optional(),
  /** off: no named prepared statements, for DATABASE_URL behind a transaction pooler that cannot keep them (PgBouncer before 1.21). */
  DATABASE_PREPARED_STATEMENTS: onOff('on'),
  REDIS_URL: redisUrl,
  /** Seed nodes of a Redis Cluster (docs/services.md, "Redis Cluster and Sentinel"): set, REDIS_URL gives only credentials and TLS. */
  REDIS_CLUSTER_NODES: hostPortList,
  /** Sentinels that name the current master (with REDIS_SENTINEL_NAME): set, REDIS_URL gives only credentials, database and TLS. */
  REDIS_SENTINELS: hostPortList,
  REDIS_SENTINEL_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 characters of A-Z a-z 0-9 _ . -')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  REDIS_PREFIX: redisPrefix,
  LOG_LEVEL: logLevel,
  BUSY_INPUT_MODE: busyInputMode,
  TELEGRAM_BOT_TOKEN: telegramToken,
  TELEGRAM_API_ROOT: url('https://api.telegram.org'),
  SLACK_BOT_TOKEN: optionalSecret,
  SLACK_SIGNING_SECRET: optionalSecret,
  SLACK_API_URL: url('https://slack.com/api/'),
  DISCORD_BOT_TOKEN: optionalSecret,
  DISCORD_APPLICATION_ID: optionalSecret,
  DISCORD_PUBLIC_KEY: optionalSecret,
  DISCORD_API_URL: url('https://discord.com/api'),
  DISCORD_GATEWAY_URL: url(),
  /** Comma-separated URLs that receive every lifecycle event (recorded by gateway and workers, signed and sent by a worker). */
  EVENT_WEBHOOK_URLS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((u) => u.trim()).filter(Boolean))
    .pipe(z.array(z.string().url('must be a comma-separated list of URLs'))),
  /** Characters per outbound Telegram message (Telegram's hard limit is 4096). */
  TELEGRAM_MESSAGE_LIMIT: positiveInt(4096),
  /** Characters per outbound Discord message (Discord's hard limit is 2000). */
  DISCORD_MESSAGE_LIMIT: positiveInt(2000),
  /** Characters per outbound Slack message (Slack truncates past 40,000 and recommends 4,000). */
  SLACK_MESSAGE_LIMIT: positiveInt(4000),
  /** Input waiting behind a running turn, per conversation, before new input is refused with a notice. */
  MAX_QUEUED_INPUT: positiveInt(32),
  /** Users (`platform:account:user`) who may answer any approval question besides the user who asked (docs/codex.md, "Approvals in chat"). */
  APPROVERS: userKeyList,
};

/** Comma-separated variable names; a worker secret (DATABASE_URL, a bot token…) is refused at start (issue 30, finding 1). */
const codexEnvPassthrough = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((name) => name.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be comma-separated variable names'))
      .refine((names) => !names.some(isWorkerSecretName), { message: "must not name the worker's own secrets (DATABASE_URL, REDIS_URL, ADMIN_TOKEN, bot tokens…)" }),
  );

/** The same directory, or one inside the other. */
function overlaps(a: string, b: string): boolean {
  return a === b || isInsideDirectory(a, b) || isInsideDirectory(b, a);
}

/**
 * The Codex runtime (docs/codex.md, "Set-up"). A worker starts without Codex
 * installed: the child is spawned only when a Codex conversation runs.
 */
const codexSettings = {
  /** The command line that starts an app-server child (looked up on PATH unless a path). */
  CODEX_COMMAND: z.string().trim().min(1, 'must not be empty').default('codex app-server'),
  /** Root of the per-conversation working directories (`<root>/<conversation id>`), resolved absolute at start. */
  CODEX_WORKSPACES: directory('.codex-workspaces'),
  /** Root of each conversation's own HOME, CODEX_HOME and TMPDIR (`<root>/<conversation id>`), apart from the workspaces a child may write to. */
  CODEX_HOMES: directory('.codex-homes'),
  /** Further variables a Codex child gets beyond its allow-list (a proxy, a CA bundle); the worker's own secrets are refused. */
  CODEX_ENV_PASSTHROUGH: codexEnvPassthrough,
  /** The longest one Codex turn may run (its own budget instead of TURN_TIMEOUT_MS: an agent that runs commands takes longer). */
  CODEX_TURN_TIMEOUT_MS: intInRange(600_000, 1_000, 14_400_000),
  /** A child with no turn for this long is closed (its thread is resumed by a fresh child next time). */
  CODEX_IDLE_MS: intInRange(600_000, 1_000, 86_400_000),
  /** Children one worker process keeps at once (the least recently used idle one is closed to make room). */
  CODEX_MAX_CHILDREN: intInRange(8, 1, 256),
  /** Of those, how many one user's turns may hold at once (a turn waiting on an approval holds its child for minutes). */
  CODEX_MAX_CHILDREN_PER_USER: intInRange(2, 1, 256),
  /** Whether an operator may give a conversation the full-access profile (no sandbox); a stored full-access counts only while on. */
  CODEX_ALLOW_FULL_ACCESS: onOff('off'),
  /** How a child is confined (docs/codex.md, "How a child is confined"): `bwrap` (bubblewrap namespaces, the default) or `off` (an operator's explicit opt-out). */
  CODEX_SANDBOX: z.enum(['bwrap', 'off'], { errorMap: () => ({ message: 'must be bwrap or off' }) }).default('bwrap'),
  /** Further paths every sandboxed child may read (beyond the system's and the Codex command's own files). */
  CODEX_SANDBOX_READ_PATHS: pathList,
  /** Further paths every sandboxed child may write: shared by all conversations, so for caches and test fixtures only. */
  CODEX_SANDBOX_WRITE_PATHS: pathList,
  /** A sandboxed child's network (docs/codex.md, "The child's network"): `provider` (its own, out only to its model provider through the worker's proxy; the default) or `shared` (the worker's). */
  CODEX_SANDBOX_NETWORK: z.enum(['provider', 'shared'], { errorMap: () => ({ message: 'must be provider or shared' }) }).default('provider'),
  /** Further `host:port` destinations a child may reach under CODEX_SANDBOX_NETWORK=provider (an MCP server, a package mirror). */
  CODEX_SANDBOX_ALLOW_HOSTS: hostPortList,
  /** Whose uid a sandboxed child runs as when the worker runs as root (docs/codex.md, "The child's user"): `conversation` (one of its own per conversation, the default) or `worker` (root, capabilities dropped). An ordinary worker's children keep its uid either way. */
  CODEX_SANDBOX_USER: z.enum(['conversation', 'worker'], { errorMap: () => ({ message: 'must be conversation or worker' }) }).default('conversation'),
  /** The first uid of the range a root worker's children run as: `base + conversation id mod 1e9`. */
  CODEX_SANDBOX_UID_BASE: intInRange(2_000_000_000, 1_000, 3_294_967_294),
};

const idList = z
  .string()
  .default('')
  .transform((value) => value.split(',').map((id) => id.trim()).filter(Boolean));

/**
 * GROUP_POLICY when unset: as strict as DM_POLICY. With DM_POLICY=pairing or
 * allowlist, a stranger who creates a group and adds the bot must not get
 * what a direct message would refuse them (issue 30, finding 6); an operator
 * who wants open groups says GROUP_POLICY=open (and `npm run doctor` warns).
 */
export function groupPolicyFor(dmPolicy: 'open' | 'allowlist' | 'pairing'): 'open' | 'allowlist' {
  return dmPolicy === 'open' ? 'open' : 'allowlist';
}

/** One way to reach Redis: a URL, a cluster, or sentinels with the master's name. */
function checkRedisReach(env: { REDIS_CLUSTER_NODES: string[]; REDIS_SENTINELS: string[]; REDIS_SENTINEL_NAME?: string | undefined }, ctx: z.RefinementCtx): void {
  if (env.REDIS_CLUSTER_NODES.length > 0 && env.REDIS_SENTINELS.length > 0) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['REDIS_SENTINELS'], message: 'must not be set together with REDIS_CLUSTER_NODES (a cluster fails over by itself)' });
  }
  if (env.REDIS_SENTINELS.length > 0 && env.REDIS_SENTINEL_NAME === undefined) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['REDIS_SENTINEL_NAME'], message: 'is required when REDIS_SENTINELS is set (the name the sentinels monitor)' });
  }
}

export const gatewayEnvSchema = z
  .object(
    describeShape({
      ...shared,
      /** Shown as the default of conversations that name no runtime (the worker's AGENT_RUNTIME decides what runs). */
      AGENT_RUNTIME: agentRuntime,
      /** The admin API refuses the full-access profile unless this is on (set it alike on gateways and workers). */
      CODEX_ALLOW_FULL_ACCESS: codexSettings.CODEX_ALLOW_FULL_ACCESS,
      /** Access: who may talk to the bot in DMs and in groups; allowlists per platform. */
      DM_POLICY: z.enum(['open', 'allowlist', 'pairing']).default('open'),
      // No fixed default: unset, it follows DM_POLICY (groupPolicyFor), so a closed DM policy is not opened by a group (issue 30, finding 6).
      GROUP_POLICY: z.enum(['open', 'allowlist']).optional(),
      TELEGRAM_ALLOWED_USERS: idList,
      SLACK_ALLOWED_USERS: idList,
      DISCORD_ALLOWED_USERS: idList,
      DISCORD_ALLOWED_ROLES: idList,
      /** Messages per user per minute before the user is asked to slow down (0: no limit). */
      USER_RATE_LIMIT_PER_MINUTE: nonNegativeInt(30),
      HOST: z.string().trim().min(1).default('127.0.0.1'),
      PORT: port(3000),
      ADMIN_TOKEN: optionalSecret,
      /** Proxies trusted to name the client's address and scheme (X-Forwarded-*): the admin failure limiter, audit log and Secure cookie use them. */
      TRUST_PROXY: trustProxy,
      /** `Secure` on the admin session cookie: auto (when the client's scheme is https), always, never. */
      ADMIN_COOKIE_SECURE: adminCookieSecure,
      TELEGRAM_WEBHOOK_SECRET: telegramSecret,
      /** webhook: Telegram posts to /webhooks/telegram; polling: one gateway process long-polls getUpdates. */
      TELEGRAM_MODE: z.enum(['webhook', 'polling']).default('webhook'),
      /** Largest accepted webhook body, bytes (1 MiB by default). */
      BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
      /** Triggered turns (docs/tools.md): the JSON file of hooks `POST /hooks/{name}` serves, read once at start; unset: no such route. */
      HOOKS_FILE: z
        .string()
        .trim()
        .min(1)
        .optional()
        .or(z.literal('').transform(() => undefined)),
    }),
  )
  .superRefine((env, ctx) => {
    checkRedisReach(env, ctx);
    if (env.TELEGRAM_BOT_TOKEN && env.TELEGRAM_MODE === 'webhook' && !env.TELEGRAM_WEBHOOK_SECRET) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['TELEGRAM_WEBHOOK_SECRET'],
        message: 'is required when TELEGRAM_BOT_TOKEN is set (the webhook must be authenticated)',
      });
    }
    // One token, or name:token pairs separated by commas (docs/admin.md); the gateway parses it the same way.
    if (env.ADMIN_TOKEN) {
      const entries = env.ADMIN_TOKEN.split(',').map((entry) => entry.trim());
      const names = entries.map((entry) => (entry.includes(':') ? entry.slice(0, entry.indexOf(':')) : 'admin'));
      if (entries.some((entry) => !/^(?:[A-Za-z0-9_.-]{1,64}:)?[^\s,:]{16,}$/.test(entry)) || new Set(names).size !== names.length) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['ADMIN_TOKEN'],
          message: 'must be one token or name:token pairs separated by commas, each name once (names: A-Z a-z 0-9 _ . -; tokens: 16+ characters, no spaces, commas or colons)',
        });
      }
    }
  })
  .transform((env) => ({ ...env, GROUP_POLICY: env.GROUP_POLICY ?? groupPolicyFor(env.DM_POLICY) }));

export const workerEnvSchema = z
  .object(
    describeShape({
      ...shared,
      HOST: z.string().trim().min(1).default('127.0.0.1'),
      /** Health/metrics port of the worker; 0 picks a free one. */
      WORKER_PORT: port(0),
      // No default: a worker that silently talked to a simulator that is not
      // there would fail every turn; it refuses to start instead.
      MODEL_BASE_URL: z
        .string({ required_error: 'is required: the OpenAI-compatible base URL of the model (the simulator: http://127.0.0.1:4010/v1)' })
        .trim()
        .url('must be a URL'),
      MODEL_API_KEY: z.string().default('switchboard-sim'),
      MODEL_NAME: z.string().trim().min(1).default('switchboard-sim'),
      MODEL_CONTEXT_TOKENS: positiveInt(128_000),
      MODEL_TIMEOUT_MS: positiveInt(120_000),
      /** Retries of a model request answered 408/409/429/5xx or whose connection failed (docs/turns.md "Model errors"). */
      MODEL_MAX_RETRIES: nonNegativeInt(2),
      /** The longest wait before such a retry; a model asking for longer (`Retry-After`) is not retried and the user is told. */
      MODEL_RETRY_MAX_WAIT_MS: nonNegativeInt(30_000),
      /** Further OpenAI-compatible endpoints tried in order when the current one fails with 429, 5xx, a timeout or a lost connection (docs/turns.md "Model fallbacks"). */
      MODEL_FALLBACKS: modelFallbacks,
      /** How long an endpoint that failed is tried only after the others (per worker process). */
      MODEL_FALLBACK_COOLDOWN_MS: nonNegativeInt(60_000),
      COMPRESSION_THRESHOLD: ratio(0.8),
      /** Share of the context kept verbatim (newest messages) when compressing. */
      COMPRESSION_KEEP_RATIO: ratio(0.2),
      /** A summariser that takes longer fails (and the turn goes on without compression). */
      SUMMARY_TIMEOUT_MS: positiveInt(60_000),
      /** Failed summaries in a row before automatic compression stops for the session. */
      COMPRESSION_MAX_ATTEMPTS: positiveInt(3),
      /** Wait after a failed summary before the next automatic try (doubles per failure). */
      COMPRESSION_BACKOFF_MS: nonNegativeInt(30_000),
      /** Tell the user in one line when older messages were summarised (off by default: most users never need to know). */
      COMPRESSION_NOTICE: z.enum(['on', 'off']).default('off'),
      /** Reactions on the user's message for a turn's state (taken 👀, done ✅, failed ❌); best-effort, never fails a turn. */
      STATUS_REACTIONS: z.enum(['on', 'off']).default('on'),
      /** How long a turn runs before its input shows 👀; an answer ready sooner leaves no reaction (issue 31: its reply says it was seen). */
      STATUS_REACTION_AFTER_MS: intInRange(1000, 0, 600_000),
      /** A slow answer is posted early and grows in place by edits (docs/turns.md "Streaming replies"); an operator sets it per conversation. */
      STREAMING: z.enum(['on', 'off']).default('on'),
      /** How long a turn runs before its answer is shown as it grows; an answer ready sooner is one plain message. */
      STREAM_AFTER_MS: intInRange(1000, 0, 600_000),
      RESTART_SUSPEND_THRESHOLD: positiveInt(3),
      /** The runtime of conversations that name none (docs/codex.md); an operator sets one per conversation through the admin API. */
      AGENT_RUNTIME: agentRuntime,
      ...codexSettings,
      /** How long a question to the chat user waits for an answer before it is declined (fail closed). */
      APPROVAL_TIMEOUT_SECONDS: intInRange(300, 1, 86_400),
      /** on: every approval a runtime asks is granted without asking (non-interactive use only). */
      CODEX_AUTO_APPROVE: z.enum(['on', 'off']).default('off'),
      /** Largest file a user may send (photo, document, voice), announced or downloaded; larger ones get one short reply (docs/media.md). */
      MEDIA_MAX_BYTES: intInRange(5 * 1024 * 1024, 1, 50 * 1024 * 1024),
      /** How long fetching one file (the platform's lookup and the download together) may take before the user is told it failed. */
      MEDIA_FETCH_TIMEOUT_MS: intInRange(20_000, 100, 300_000),
      /** Bytes of all files one turn reads (issue 30, finding 3); a file past it gets one short reply. */
      MEDIA_TURN_MAX_BYTES: intInRange(10 * 1024 * 1024, 1, 200 * 1024 * 1024),
      /** Images one turn reads (each is held as base64 for the request). */
      MEDIA_TURN_MAX_IMAGES: intInRange(8, 0, 100),
      /** Characters of one document's text given to the model; the rest is cut with a note. */
      MEDIA_DOCUMENT_MAX_CHARS: intInRange(100_000, 100, 10_000_000),
      /** OpenAI-compatible base URL whose /audio/transcriptions turns voice into text; unset: voice is refused with one short reply. */
      TRANSCRIBE_BASE_URL: url(),
      TRANSCRIBE_MODEL: z.string().trim().min(1).default('whisper-1'),
      TRANSCRIBE_API_KEY: optionalSecret,
      TRANSCRIBE_TIMEOUT_MS: intInRange(60_000, 100, 600_000),
      SYSTEM_PROMPT: z.string().default('You are Switchboard, a helpful assistant in a chat app. Answer briefly.'),
      /**
       * How long a conversation's lease outlives its last renewal (renewed every
       * third of it): the longest a crashed worker keeps its conversations
       * waiting. Any value is safe, because the commit is fenced (docs/turns.md).
       */
      CONVERSATION_LEASE_TTL_MS: z.coerce.number().int().min(300).default(30_000),
      /** Conversations one worker process runs at once. */
      WORKER_CONCURRENCY: positiveInt(64),
      /** Postgres connections in the worker's pool (was fixed at 20). */
      WORKER_DB_POOL_SIZE: positiveInt(20),
      /**
       * Compressions one worker process runs at once; the rest wait their turn.
       * Each holds a pooled connection for its lock through the summariser call,
       * so this stays at most half of WORKER_DB_POOL_SIZE (docs/compression.md).
       */
      COMPRESSION_CONCURRENCY: positiveInt(4),
      COLLECT_DEBOUNCE_MS: nonNegativeInt(500),
      /** How long to wait for the next part after a near-limit part of a long paste (Telegram splits pastes past 4096 characters); 0 turns merging off. */
      PASTE_MERGE_WINDOW_MS: nonNegativeInt(600),
      MAX_TOOL_ITERATIONS: positiveInt(8),
      /**
       * The longest one turn may run, from its start (compression included) to
       * its answer; past it the turn is stopped, ends `failed` (`TURN_TIMEOUT`)
       * and the user is told (docs/guarantees.md "Time and turn limits").
       * 1 s to 1 h: a turn must still be able to answer, and a slot must come back.
       */
      TURN_TIMEOUT_MS: intInRange(300_000, 1_000, 3_600_000),
      /** The most one `wait` tool call may wait; a longer request is a tool error the model reads. */
      TOOL_WAIT_MAX_SECONDS: intInRange(60, 0, 600),
      /** The most all `wait` calls of one turn may wait together; once spent, a wait is a tool error at once. */
      TURN_WAIT_BUDGET_SECONDS: intInRange(120, 0, 3_600),
      /** Path of the MCP servers file (docs/tools.md, "MCP tool servers"); read and checked at start, unset: no MCP at all. */
      MCP_SERVERS: optionalSecret,
      /**
       * Turns of one platform user running at once, across all workers; a
       * conversation whose next input is from a user at the limit is deferred
       * (its input stays pending) until one of them ends.
       */
      USER_MAX_RUNNING_TURNS: intInRange(4, 1, 1_000),
      /** Active schedules one chat user may hold across conversations (docs/schedules.md); the `schedule` tool refuses one more. 0: users may make none. */
      USER_MAX_SCHEDULES: intInRange(20, 0, 10_000),
      /** How late an occurrence may still run (everything was down at its time); later, it is recorded as missed (docs/schedules.md). */
      SCHEDULE_CATCHUP_MS: intInRange(3_600_000, 0, 7 * 24 * 3_600_000),
      /** Transcript messages a worker keeps in memory across turns (all sessions together); 0 reads the whole session every turn. */
      HISTORY_CACHE_MESSAGES: nonNegativeInt(200_000),
      /** The same cache's bound in bytes (text at two bytes a character, plus a share per row): users' documents cannot pin memory (issue 30, finding 3). */
      HISTORY_CACHE_BYTES: nonNegativeInt(32 * 1024 * 1024),
      /** On SIGTERM, how long running turns may go on before they are cut off (and resumed after restart). */
      DRAIN_TIMEOUT_MS: nonNegativeInt(10_000),
      /** Worker heartbeat period, and the silence after which a worker is declared dead (docs/restarts.md). */
      HEARTBEAT_INTERVAL_MS: positiveInt(1000),
      WORKER_DEAD_AFTER_MS: positiveInt(5000),
      EVENT_WEBHOOK_SECRET: optionalSecret,
      /** How often the recovery sweep looks for stranded input, ms. */
      SWEEP_INTERVAL_MS: positiveInt(2000),
    }),
  )
  .superRefine((env, ctx) => {
    checkRedisReach(env, ctx);
    if (env.EVENT_WEBHOOK_URLS.length > 0 && !env.EVENT_WEBHOOK_SECRET) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['EVENT_WEBHOOK_SECRET'], message: 'is required when EVENT_WEBHOOK_URLS is set (events are signed)' });
    }
    // A conversation's HOME and CODEX_HOME (its config and transcripts) must lie outside what workspace-write lets its child write.
    if (overlaps(env.CODEX_HOMES, env.CODEX_WORKSPACES)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['CODEX_HOMES'], message: 'must lie outside CODEX_WORKSPACES (and not contain it)' });
    }
    // A path every child shares inside the roots that keep conversations apart would be hidden by the sandbox anyway: say so at start.
    // (One that contains a root is fine: the sandbox masks the root in it.)
    for (const name of ['CODEX_SANDBOX_READ_PATHS', 'CODEX_SANDBOX_WRITE_PATHS'] as const) {
      if (env[name].some((path) => [env.CODEX_WORKSPACES, env.CODEX_HOMES].some((root) => path === root || isInsideDirectory(root, path)))) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message: 'must not lie inside CODEX_WORKSPACES or CODEX_HOMES' });
      }
    }
    // Compression locks hold pooled connections; half the pool stays free for everything else (docs/compression.md).
    if (env.COMPRESSION_CONCURRENCY * 2 > env.WORKER_DB_POOL_SIZE) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ['COMPRESSION_CONCURRENCY'],
        message: `must be at most half of WORKER_DB_POOL_SIZE (${env.WORKER_DB_POOL_SIZE}): each running compression holds a connection of the pool for its lock`,
      });
    }
  });

export const simEnvSchema = z.object(
  describeShape({
    HOST: z.string().trim().min(1).default('127.0.0.1'),
    PORT: port(4010),
    LOG_LEVEL: logLevel,
    /** Where the simulated Telegram posts updates (the gateway's webhook). */
    SIM_TELEGRAM_WEBHOOK_URL: url(),
    TELEGRAM_WEBHOOK_SECRET: telegramSecret,
    TELEGRAM_BOT_TOKEN: telegramToken,
    /** Where the simulated Slack posts events (the gateway's /webhooks/slack/events). */
    SIM_SLACK_EVENTS_URL: url(),
    SLACK_SIGNING_SECRET: optionalSecret,
    SLACK_BOT_TOKEN: optionalSecret,
    /** Where the simulated Discord posts interactions (the gateway's /webhooks/discord/interactions). */
    SIM_DISCORD_INTERACTIONS_URL: url(),
    DISCORD_BOT_TOKEN: optionalSecret,
    DISCORD_APPLICATION_ID: optionalSecret,
  }),
);

export const migrateEnvSchema = z.object(describeShape({ DATABASE_URL: postgresUrl, DATABASE_SESSION_URL: postgresUrl.optional(), LOG_LEVEL: logLevel }));

/** `npm run pair`: the running gateway's admin API, reached as the gateway's own HOST and PORT say unless GATEWAY_URL is given. */
export const pairEnvSchema = z.object(
  describeShape({
    GATEWAY_URL: url(),
    HOST: z.string().trim().min(1).default('127.0.0.1'),
    PORT: port(3000),
    ADMIN_TOKEN: optionalSecret,
  }),
);

export type GatewayConfig = z.output<typeof gatewayEnvSchema>;
export type WorkerConfig = z.output<typeof workerEnvSchema>;
export type SimConfig = z.output<typeof simEnvSchema>;
export type PairConfig = z.output<typeof pairEnvSchema>;
export type BusyInputMode = z.output<typeof busyInputMode>;
