import { migrateDatabase } from '@switchboard/db';
import { startPostgres, startRedis, type PostgresServer, type RedisServer } from '@switchboard/harness';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';

// The keys provided here are declared (vitest's ProvidedContext) in
// @switchboard/harness/test-env, which reads them.
export const templateDb = 'sb_template';

/**
 * One Postgres and one Redis for the whole run, started here rather than
 * per file: initdb is the slow part, and CREATE DATABASE … TEMPLATE gives
 * each file a migrated database in milliseconds.
 */
export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const startedAt = performance.now();
  const [pgResult, redisResult] = await Promise.allSettled([startPostgres(), startRedis()]);
  const pg = pgResult.status === 'fulfilled' ? pgResult.value : undefined;
  const redis = redisResult.status === 'fulfilled' ? redisResult.value : undefined;
  const teardown = () => stopAll(pg, redis);
  if (pgResult.status === 'rejected' || redisResult.status === 'rejected' || !pg || !redis) {
    await teardown();
    throw pgResult.status === 'rejected' ? pgResult.reason : (redisResult as PromiseRejectedResult).reason;
  }
  const serversUpAt = performance.now();

  try {
    await createTemplate(pg);
  } catch (error) {
    await teardown();
    throw error;
  }

  provide('pgAdminUrl', pg.adminUrl);
  provide('pgTemplateDb', templateDb);
  provide('redisUrl', redis.url);
  console.log(
    `[harness] postgres :${pg.port} and redis :${redis.port} up in ${seconds(serversUpAt - startedAt)}, ` +
      `template migrated in ${seconds(performance.now() - serversUpAt)}`,
  );
  return teardown;
}

async function createTemplate(pg: PostgresServer): Promise<void> {
  const admin = postgres(pg.adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin`create database ${admin(templateDb)}`;
    await migrateDatabase(pg.urlFor(templateDb));
    // CREATE DATABASE … TEMPLATE fails while anyone is connected to the
    // template, so once migrated nobody may connect to it again.
    await admin`alter database ${admin(templateDb)} with is_template true allow_connections false`;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function stopAll(pg: PostgresServer | undefined, redis: RedisServer | undefined): Promise<void> {
  const results = await Promise.allSettled([pg?.destroy(), redis?.destroy()]);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`;
}
