export { createDbClient, type CreateDbOptions, type Database, type DbClient, type Sql } from './client.ts';
export { AdvisoryLock } from './lock-ids.ts';
export { migrateDatabase, migrationsFolder } from './migrate.ts';
export * from './schema/index.ts';
export * from './queries/outbox-store.ts';
export * from './queries/store-inbound.ts';
export * from './queries/sweep-queries.ts';
export * from './queries/turn-store.ts';
export * from './queries/session-store.ts';
