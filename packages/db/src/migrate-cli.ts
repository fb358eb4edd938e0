import { loadConfigOrExit, migrateEnvSchema } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { migrateDatabase } from './migrate.ts';

const config = loadConfigOrExit(migrateEnvSchema);
const log = createLogger('migrate', config.LOG_LEVEL);

try {
  // Over the direct connection: the migration lock is a session lock (docs/services.md, "Postgres behind PgBouncer").
  await migrateDatabase(config.DATABASE_SESSION_URL ?? config.DATABASE_URL);
  log.info('migrations applied');
} catch (error) {
  log.error({ err: error }, 'migration failed');
  process.exitCode = 1;
}
