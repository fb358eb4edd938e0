import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.ts';

/**
 * The one database handle every caller holds: drizzle over postgres.js.
 * `$client` is the postgres.js client underneath, used only inside this
 * package, by the statements on the hot path (see turn-store.ts), because
 * postgres.js prepares a tagged statement once per connection while drizzle
 * sends its queries unprepared; and by the advisory locks, which need a
 * reserved connection. Outside packages/db only tests reach for it (lint).
 */
export type Database = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql };

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
}

export function createDbClient(url: string, options: CreateDbOptions = {}): DbClient {
  const sql = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 5,
    idle_timeout: 60,
    onnotice: () => undefined,
    connection: { application_name: options.applicationName ?? 'switchboard' },
  });
  const db = drizzle(sql, { schema });
  return {
    db,
    close: (timeoutSeconds = 5) => sql.end({ timeout: timeoutSeconds }),
  };
}
