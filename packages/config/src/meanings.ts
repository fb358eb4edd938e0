import { ZodEffects, ZodObject, type z } from 'zod';

/**
 * One line per variable: what it means to an operator. Attached to the
 * schemas with `.describe()` (describeShape), so `.env.example`
 * (scripts/lib/env-example.ts) and the doctor read the meaning from the
 * schema itself; a test refuses a variable without one.
 */
export const meanings: Record<string, string> = {
  DATABASE_URL: 'Postgres connection URL (may point at PgBouncer in transaction mode: then set DATABASE_SESSION_URL, and DATABASE_PREPARED_STATEMENTS=off before PgBouncer 1.21)',
  DATABASE_SESSION_URL: 'a direct, session-mode Postgres connection for advisory locks held across calls and for migrations; unset: DATABASE_URL',
  DATABASE_PREPARED_STATEMENTS: 'on: the hot statements are prepared once per connection; off: sent unprepared, for a transaction pooler that cannot keep prepared statements',
  REDIS_URL: 'Redis connection URL (run Redis with maxmemory-policy noeviction)',
  REDIS_PREFIX: 'prefix of every Redis key, so several systems can share one Redis',
  LOG_LEVEL: 'pino log level: fatal, error, warn, info, debug, trace or silent',
  BUSY_INPUT_MODE: 'what a message does while a turn runs: interrupt, queue, collect or steer',
  HOST: 'address the HTTP server listens on',
  PORT: 'port the HTTP server listens on (gateway 3000, simulator 4010)',
  WORKER_PORT: "port of the worker's /healthz and /metrics server; 0 picks a free one",
  GATEWAY_URL: 'npm run pair: the running gateway whose admin API it calls; unset: http://HOST:PORT',
  ADMIN_TOKEN: 'admin tokens: one token, or name:token pairs separated by commas (16+ characters each); unset: no /admin at all',
  TRUST_PROXY: 'proxies trusted for X-Forwarded-*: false, true, a hop count, or comma-separated IPs/CIDRs (docs/admin.md)',
  ADMIN_COOKIE_SECURE: 'Secure flag on the admin session cookie: auto (when the client used https), always or never',
  DM_POLICY: 'who may talk to the bot in direct messages: open, allowlist, or pairing (unknown users get a one-time code an operator approves)',
  GROUP_POLICY: 'who may talk to the bot in groups and channels: open or allowlist; unset, it follows DM_POLICY (open only when DM_POLICY=open, else allowlist)',
  TELEGRAM_ALLOWED_USERS: 'comma-separated Telegram user ids for the allowlists',
  SLACK_ALLOWED_USERS: 'comma-separated Slack user ids for the allowlists',
  DISCORD_ALLOWED_USERS: 'comma-separated Discord user ids for the allowlists',
  DISCORD_ALLOWED_ROLES: 'comma-separated Discord role ids whose members pass the allowlists',
  USER_RATE_LIMIT_PER_MINUTE: 'messages per user per minute before the user is asked to slow down; 0: no limit',
  MAX_QUEUED_INPUT: 'messages waiting per conversation before new ones are refused with one notice',
  BODY_LIMIT_BYTES: 'largest accepted webhook body, in bytes',
  TELEGRAM_BOT_TOKEN: "the Telegram bot's token; unset: Telegram off",
  TELEGRAM_WEBHOOK_SECRET: 'secret_token given to setWebhook (1-256 of A-Z a-z 0-9 _ -); required with a token in webhook mode',
  TELEGRAM_MODE: 'webhook (Telegram posts to /webhooks/telegram) or polling (one gateway long-polls getUpdates)',
  TELEGRAM_API_ROOT: 'Telegram Bot API root',
  TELEGRAM_MESSAGE_LIMIT: 'split Telegram replies at this many characters',
  SLACK_SIGNING_SECRET: 'verifies /webhooks/slack/events; unset: Slack inbound off',
  SLACK_BOT_TOKEN: 'xoxb- bot token for auth.test and chat.postMessage; unset: Slack replies off',
  SLACK_API_URL: 'Slack Web API base URL',
  SLACK_MESSAGE_LIMIT: 'split Slack replies at this many characters (at most 8000)',
  DISCORD_BOT_TOKEN: "the Discord bot's token: the Gateway connection and replies; unset: Discord off",
  DISCORD_APPLICATION_ID: 'Discord application id; unset: the one Discord reports',
  DISCORD_PUBLIC_KEY: 'verifies /webhooks/discord/interactions (Ed25519); unset: interactions off',
  DISCORD_API_URL: 'Discord REST base URL without the version',
  DISCORD_GATEWAY_URL: 'Discord Gateway WebSocket URL; unset: asked of GET /gateway/bot',
  DISCORD_MESSAGE_LIMIT: 'split Discord replies at this many characters',
  EVENT_WEBHOOK_URLS: 'comma-separated URLs that receive every lifecycle event, signed',
  EVENT_WEBHOOK_SECRET: 'HMAC-SHA256 key that signs lifecycle event webhooks; required with EVENT_WEBHOOK_URLS',
  MEDIA_MAX_BYTES: "largest file a user may send (photo, document, voice), by the platform's announced size and while downloading; larger: one short reply, nothing to the model (1-52428800)",
  MEDIA_TURN_MAX_BYTES: 'bytes of all the files one turn reads; a file past it gets one short reply, nothing to the model (1-209715200)',
  MEDIA_TURN_MAX_IMAGES: 'images one turn reads; more get one short reply (0-100)',
  MEDIA_DOCUMENT_MAX_CHARS: "characters of one document's text the model is given; the rest is cut with a note saying so (100-10000000)",
  MEDIA_FETCH_TIMEOUT_MS: "how long fetching one user's file may take (the platform's lookup and the download); past it the user is told (100-300000)",
  TRANSCRIBE_BASE_URL: 'OpenAI-compatible base URL whose POST /audio/transcriptions turns voice messages into text; unset: voice is refused with one short reply',
  TRANSCRIBE_MODEL: 'transcription model name sent to TRANSCRIBE_BASE_URL',
  TRANSCRIBE_API_KEY: 'API key sent to TRANSCRIBE_BASE_URL; unset: MODEL_API_KEY when TRANSCRIBE_BASE_URL has the same origin as MODEL_BASE_URL, else none',
  TRANSCRIBE_TIMEOUT_MS: 'how long one transcription may take before the user is told it failed (100-600000)',
  MODEL_BASE_URL: 'required: OpenAI-compatible chat completions base URL of the model (the simulator: http://127.0.0.1:4010/v1)',
  MODEL_API_KEY: 'API key sent to the model',
  MODEL_NAME: 'model name sent with every request',
  MODEL_CONTEXT_TOKENS: "the model's context size in tokens",
  MODEL_TIMEOUT_MS: "one model request's timeout",
  MODEL_MAX_RETRIES: 'retries of a model request answered 408/409/429/5xx or whose connection failed',
  MODEL_RETRY_MAX_WAIT_MS: 'longest wait before such a retry; a model asking for longer is not retried',
  MODEL_FALLBACKS: 'comma-separated further endpoints base_url|model|API_KEY_ENV (the third field names the variable holding the key), tried in order after the primary on 429, 5xx, a timeout or a lost connection; empty: none',
  MODEL_FALLBACK_COOLDOWN_MS: 'how long a model that failed is tried only after the others (kept per worker process)',
  COMPRESSION_THRESHOLD: 'share of the context at which the session is compressed',
  COMPRESSION_KEEP_RATIO: 'share of the context kept verbatim (newest messages) when compressing',
  SUMMARY_TIMEOUT_MS: "the summariser's timeout; past it the turn goes on without compression",
  COMPRESSION_MAX_ATTEMPTS: 'failed summaries in a row before automatic compression stops for the session',
  COMPRESSION_BACKOFF_MS: 'wait after a failed summary before the next automatic try (doubles per failure)',
  COMPRESSION_NOTICE: 'on: one line tells the user when older messages were summarised',
  STATUS_REACTIONS: "on: the user's message shows the turn's state as a reaction (queued, taken, done, failed); a platform that refuses one never fails the turn",
  STATUS_REACTION_AFTER_MS: 'how long a turn runs before its input shows the taken reaction (0-600000; 0: at once); an answer ready sooner leaves no reaction at all unless the message showed queued while it waited',
  STREAMING: 'on: an answer still running after STREAM_AFTER_MS is posted early and grows in place by edits (about one a second); off: one message once done. Per conversation: PUT /admin/conversations/{id}/streaming',
  STREAM_AFTER_MS: 'how long a turn runs before its answer is shown as it grows (0-600000); an answer ready sooner is one plain message with no edits',
  RESTART_SUSPEND_THRESHOLD: 'restarts (turns cut off by a crash or shutdown) before a conversation is suspended',
  AGENT_RUNTIME: 'runtime of conversations that name none: openai (chat completions at MODEL_BASE_URL) or codex (a codex app-server child); per conversation through the admin API',
  CODEX_COMMAND: 'codex runtime: the command line that starts an app-server child (docs/codex.md)',
  CODEX_WORKSPACES: 'codex runtime: root of the per-conversation working directories <root>/<conversation id>, resolved absolute at start',
  CODEX_HOMES: "codex runtime: root of each conversation's own HOME, CODEX_HOME (seeded from the operator's config.toml and auth.json) and TMPDIR, <root>/<conversation id>, mode 0700",
  CODEX_ENV_PASSTHROUGH: "codex runtime: comma-separated variables a child gets beyond PATH, LANG, LC_*, TERM and the model provider's key (e.g. HTTPS_PROXY); the worker's secrets are refused",
  CODEX_TURN_TIMEOUT_MS: 'codex runtime: the longest one Codex turn may run before it is interrupted and the user told (1000-14400000)',
  CODEX_IDLE_MS: 'codex runtime: a child with no turn for this long is closed; the next turn resumes its thread in a fresh child (1000-86400000)',
  CODEX_MAX_CHILDREN: 'codex runtime: app-server children one worker keeps at once (1-256)',
  CODEX_MAX_CHILDREN_PER_USER: "codex runtime: of a worker's children, how many one user's turns may hold at once; more are refused, retryable (1-256)",
  CODEX_ALLOW_FULL_ACCESS: 'codex runtime: on lets an operator give a conversation the full-access profiles (no sandbox; full-access-unattended also asks nothing); off: refused, and a stored one runs read-only',
  CODEX_SANDBOX: "codex runtime: bwrap runs each child in bubblewrap (own pid, mount, user, ipc and uts namespaces; only its own workspace and home writable; no /proc of the worker, other conversations, the worker's HOME or ~/.codex); off: no confinement, for hosts without unprivileged user namespaces (docs/codex.md)",
  CODEX_SANDBOX_READ_PATHS: 'codex runtime: comma-separated further paths every sandboxed child may read (what your Codex install needs beyond /usr, /etc basics and its own package); never the workspace or home roots',
  CODEX_SANDBOX_WRITE_PATHS: 'codex runtime: comma-separated further paths every sandboxed child may write, shared by all conversations (caches, test fixtures); never the workspace or home roots',
  CODEX_SANDBOX_NETWORK: "codex runtime, with CODEX_SANDBOX=bwrap: provider gives each child a network of its own that reaches only its model provider (config.toml's base_url, or OpenAI's hosts) and CODEX_SANDBOX_ALLOW_HOSTS, through the worker's proxy; shared leaves it the worker's network (Postgres, Redis, the gateway, metadata addresses reachable) (docs/codex.md)",
  CODEX_SANDBOX_USER: "codex runtime, with CODEX_SANDBOX=bwrap and a worker running as root: conversation runs each conversation's child as a uid of its own (CODEX_SANDBOX_UID_BASE + id), so it owns nothing of root's, the process limit holds and Codex's own sandbox works; worker keeps root with its capabilities dropped. An ordinary worker's children keep its uid (docs/codex.md)",
  CODEX_SANDBOX_UID_BASE: 'codex runtime: the first uid of the range a root worker gives its children (base + conversation id mod 1e9); pick a range no user of the machine has',
  CODEX_SANDBOX_ALLOW_HOSTS: 'codex runtime, with CODEX_SANDBOX_NETWORK=provider: comma-separated further host:port destinations every child may reach (an MCP server, a package mirror); never your database or Redis',
  APPROVAL_TIMEOUT_SECONDS: 'seconds a question to the chat user waits for an answer before it is declined (1-86400)',
  CODEX_AUTO_APPROVE: 'on: grant every approval a runtime asks without asking anyone (non-interactive use only); off by default',
  APPROVERS: 'comma-separated users who may answer any approval besides the user who asked, as platform:account:user (telegram:<bot id>:<user id>, slack:<team id>:<user id>, discord:<application id>:<user id>)',
  SYSTEM_PROMPT: 'system prompt of every model request',
  CONVERSATION_LEASE_TTL_MS: "how long a conversation's lease outlives its last renewal",
  WORKER_CONCURRENCY: 'conversations one worker runs at once',
  WORKER_DB_POOL_SIZE: "Postgres connections in the worker's pool",
  COMPRESSION_CONCURRENCY: 'compressions one worker runs at once (at most half of WORKER_DB_POOL_SIZE)',
  COLLECT_DEBOUNCE_MS: 'busy mode collect: quiet time before a burst becomes one turn',
  PASTE_MERGE_WINDOW_MS: 'wait for the next part after a near-limit part of a long paste; 0: off',
  MAX_TOOL_ITERATIONS: 'model → tools → model rounds per turn',
  TURN_TIMEOUT_MS: 'the longest one turn may run before it is stopped and the user told (1000-3600000)',
  TOOL_WAIT_MAX_SECONDS: 'the most one wait tool call may wait (0-600)',
  TURN_WAIT_BUDGET_SECONDS: 'the most all wait calls of one turn may wait together (0-3600)',
  USER_MAX_RUNNING_TURNS: "turns of one user running at once across all workers; the rest wait (1-1000)",
  HISTORY_CACHE_MESSAGES: 'transcript messages a worker keeps in memory across turns; 0: read the whole session every turn',
  HISTORY_CACHE_BYTES: 'the most bytes of transcript a worker keeps in memory across turns (least recently used sessions go first); 0: read the whole session every turn',
  DRAIN_TIMEOUT_MS: 'on SIGTERM, how long running turns may go on before they are cut off',
  HEARTBEAT_INTERVAL_MS: 'worker heartbeat period',
  WORKER_DEAD_AFTER_MS: 'heartbeat silence after which a worker is declared dead and its turns taken over',
  SWEEP_INTERVAL_MS: 'how often the recovery sweep looks for stranded input and due deliveries',
  SIM_TELEGRAM_WEBHOOK_URL: "simulator: where the simulated Telegram posts updates (the gateway's /webhooks/telegram)",
  SIM_SLACK_EVENTS_URL: "simulator: the simulated Slack app's Request URL (the gateway's /webhooks/slack/events)",
  SIM_DISCORD_INTERACTIONS_URL: "simulator: the simulated Discord app's Interactions Endpoint URL (the gateway's /webhooks/discord/interactions)",
};

/** Attaches each variable's meaning to its schema field. */
export function describeShape<T extends z.ZodRawShape>(shape: T): T {
  const described: Record<string, z.ZodTypeAny> = {};
  for (const [name, field] of Object.entries(shape)) {
    const meaning = meanings[name];
    described[name] = meaning ? field.describe(meaning) : field;
  }
  return described as T;
}

/** The variables of an env schema (the gateway's and worker's are refined objects), by name. */
export function readSchemaShape(schema: z.ZodTypeAny): Record<string, z.ZodTypeAny> {
  let inner = schema;
  while (inner instanceof ZodEffects) inner = inner.innerType() as z.ZodTypeAny;
  return inner instanceof ZodObject ? (inner.shape as Record<string, z.ZodTypeAny>) : {};
}
