import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.ts';

/**
 * The one database handle every caller holds: drizzle over postgres.js.
 * `$client` is the postgres.js client underneath, used only inside this
 * package, by the statements on the hot path (see turn-commit.ts), because
 * postgres.js prepares a tagged statement once per connection while drizzle
 * sends its queries unprepared. `$session`, when set, is a pool of direct
 * (session-mode) connections for the advisory locks held across calls, which
 * a transaction pooler cannot keep (sessionClientOf). Outside packages/db
 * only tests reach for either (lint).
 */
export type Database = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql; $session?: postgres.Sql };

export interface DbClient {
  db: Database;
  close: (timeoutSeconds?: number) => Promise<void>;
}

export interface CreateDbOptions {
  max?: number;
  /** Name shown in pg_stat_activity, to tell gateways from workers. */
  applicationName?: string;
  /** Fail a connection attempt after this many seconds (so a dead Postgres answers 503 fast). */
  connectTimeoutSeconds?: number;
  /** False: no named prepared statements (DATABASE_PREPARED_STATEMENTS=off, for PgBouncer in transaction mode before 1.21). */
  prepare?: boolean;
  /** DATABASE_SESSION_URL: a direct connection for session-level locks; absent or equal to `url`, the same pool serves them. */
  sessionUrl?: string;
}

/** How many session connections a process holds at most: one compression lock and the event delivery lock, with room to spare. */
const sessionPoolSize = 4;

export function createDbClient(url: string, options: CreateDbOptions = {}): DbClient {
  const connection = { application_name: options.applicationName ?? 'switchboard' };
  const sql = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    idle_timeout: 60,
    onnotice: () => undefined,
    prepare: options.prepare ?? true,
    connection,
  });
  const session =
    options.sessionUrl && options.sessionUrl !== url
      ? postgres(options.sessionUrl, { max: sessionPoolSize, connect_timeout: options.connectTimeoutSeconds ?? 5, idle_timeout: 60, onnotice: () => undefined, connection })
      : undefined;
  const db: Database = Object.assign(drizzle(sql, { schema }), session ? { $session: session } : {});
  return {
    db,
    close: async (timeoutSeconds = 5) => {
      await Promise.all([sql.end({ timeout: timeoutSeconds }), session?.end({ timeout: timeoutSeconds })]);
    },
  };
}

/**
 * The client for a lock held on one connection across other calls
 * (`pg_try_advisory_lock` + `reserve()`): the direct session pool when
 * DATABASE_SESSION_URL names one, else the ordinary pool. Behind a
 * transaction pooler the ordinary pool's "connection" is a different server
 * connection for every transaction, so a session lock there would be taken
 * on one and released (or not) on another.
 */
export function sessionClientOf(db: Database): postgres.Sql {
  return db.$session ?? db.$client;
}

/** The pooler settings of a process's config (DATABASE_PREPARED_STATEMENTS, DATABASE_SESSION_URL), as createDbClient options. */
export function databaseReach(config: { DATABASE_PREPARED_STATEMENTS: boolean; DATABASE_SESSION_URL?: string | undefined }): Pick<CreateDbOptions, 'prepare' | 'sessionUrl'> {
  return { prepare: config.DATABASE_PREPARED_STATEMENTS, ...(config.DATABASE_SESSION_URL ? { sessionUrl: config.DATABASE_SESSION_URL } : {}) };
}
