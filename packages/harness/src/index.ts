export { readCommandLine } from './command-line.ts';
export { repoRoot, spawnApp, spawnCommand, waitForHttp, type ManagedProcess } from './processes.ts';
export { delay, hasExited, spawnServer, stopChild, tailLog, type SpawnServerOptions } from './services/child-server.ts';
export { HarnessError, type HarnessErrorCode } from './services/harness-error.ts';
export { getFreePort } from './services/ports.ts';
export { startPgBouncer, type PgBouncerServer, type StartPgBouncerOptions } from './services/pgbouncer-server.ts';
export { findPostgresBinDir, startPostgres, type PostgresServer, type StartPostgresOptions } from './services/postgres-server.ts';
export { startRedis, type RedisServer, type StartRedisOptions } from './services/redis-server.ts';
export { createScratchDir } from './services/scratch-dir.ts';
