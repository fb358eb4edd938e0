import { bigint, boolean, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** One place the bot talks in. Lives long; points at its current session. */
export const conversations = pgTable(
  'conversations',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** platform:account:chat:thread:userScope — see core's resolveConversationKey. */
    key: text('key').notNull().unique(),
    platform: text('platform').notNull(),
    accountId: text('account_id').notNull(),
    chatId: text('chat_id').notNull(),
    threadId: text('thread_id').notNull().default(''),
    userScope: text('user_scope').notNull().default(''),
    status: text('status', { enum: ['active', 'suspended'] }).notNull().default('active'),
    suspendReason: text('suspend_reason'),
    /** null = the global BUSY_INPUT_MODE. */
    busyMode: text('busy_mode', { enum: ['interrupt', 'queue', 'collect', 'steer'] }),
    restartCount: integer('restart_count').notNull().default(0),
    /** null = the global AGENT_RUNTIME (docs/codex.md). */
    runtime: text('runtime', { enum: ['openai', 'codex'] }),
    /** Streaming replies for this conversation (an operator's setting); null: STREAMING (docs/turns.md "Streaming replies"). */
    streaming: text('streaming', { enum: ['on', 'off'] }),
    /** The model an operator chose for this conversation (a configured model's name); null: the configured order (docs/turns.md "Model fallbacks"). */
    model: text('model'),
    /** Whether a turn of a chosen model may move on to the other configured models when it fails; off: that model only. */
    modelFallback: boolean('model_fallback').notNull().default(false),
    /** Codex sandbox and approval profile; null = read-only. full-access only where an operator setting allows it. */
    permissionProfile: text('permission_profile', { enum: ['read-only', 'workspace-write', 'full-access', 'full-access-unattended'] }),
    /** Codex children that died mid-turn in a row for this conversation; counts toward suspension like a restart loop. */
    runtimeCrashStreak: integer('runtime_crash_streak').notNull().default(0),
    suspendedAt: timestamp('suspended_at', { withTimezone: true }),
    currentSessionId: bigint('current_session_id', { mode: 'number' }),
    preSuspendSessionId: bigint('pre_suspend_session_id', { mode: 'number' }),
    lastCompressedAt: timestamp('last_compressed_at', { withTimezone: true }),
    /** Set when the user was told their queued input hit the cap; cleared when a turn takes input. */
    inputOverflowAt: timestamp('input_overflow_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('conversations_platform_status_idx').on(t.platform, t.status), index('conversations_updated_at_idx').on(t.updatedAt)],
);
