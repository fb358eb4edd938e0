import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { AdvisoryLock } from './lock-ids.ts';

/**
 * The repository's migrations/: three levels up from packages/db/src when run
 * from source; from a `npm run build` bundle (dist/ or dist/chunks/) the
 * nearest folder upward that holds one.
 */
function findMigrationsFolder(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = resolve(dir, 'migrations');
    if (existsSync(resolve(candidate, 'meta/_journal.json'))) return candidate;
    if (dirname(dir) === dir) return resolve(from, '../../../migrations');
  }
}

export const migrationsFolder = findMigrationsFolder(dirname(fileURLToPath(import.meta.url)));

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
