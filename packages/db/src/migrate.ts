import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { AdvisoryLock } from './lock-ids.ts';

const here = dirname(fileURLToPath(import.meta.url));
// From packages/db/src when run from source, from dist/ when bundled by `npm run build`.
export const migrationsFolder = [resolve(here, '../../../migrations'), resolve(here, '../migrations')].find((dir) => existsSync(dir)) ?? resolve(here, '../../../migrations');

/**
 * Applies migrations/ to `url`. drizzle's migrate() is not safe to run
 * concurrently, so it runs on a single connection that holds a session-level
 * advisory lock; a second caller waits for the first and then finds nothing to do.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    await sql`select pg_advisory_lock(${AdvisoryLock.Migrate})`;
    try {
      await migrate(drizzle(sql), { migrationsFolder });
    } finally {
      await sql`select pg_advisory_unlock(${AdvisoryLock.Migrate})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
