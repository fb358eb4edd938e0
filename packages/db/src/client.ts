import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema/index.ts';

/** Drizzle over postgres.js; `$client` is the postgres.js client, for the hot statements (see turn-store.ts). */
export type Database = PostgresJsDatabase<typeof schema> & { $client: postgres.Sql };
export type Sql = postgres.Sql;

export interface DbClient {
  sql: Sql;
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
    sql,
    db,
    close: (timeoutSeconds = 5) => sql.end({ timeout: timeoutSeconds }),
  };
}
