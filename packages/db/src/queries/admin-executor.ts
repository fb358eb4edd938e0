import type { PgDatabase } from 'drizzle-orm/pg-core';
import type { PostgresJsQueryResultHKT } from 'drizzle-orm/postgres-js';
import type { Database } from '../client.ts';
import type * as schema from '../schema/index.ts';

/**
 * What the admin queries run on: the database or a transaction of it. An
 * admin action and its audit row are written in one transaction, so the
 * queries take either (a nested `transaction()` on a transaction is a
 * savepoint).
 */
export type DbExecutor = PgDatabase<PostgresJsQueryResultHKT, typeof schema>;

/**
 * Hands a transaction to a query written for `Database` (such as
 * resetConversationSession). Only `$client` differs between the two types,
 * and none of those queries touches it.
 */
export function asDatabase(executor: DbExecutor): Database {
  return executor as Database;
}
