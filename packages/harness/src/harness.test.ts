import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { startPostgres } from './services/postgres-server.ts';
import { startRedis } from './services/redis-server.ts';
import { createRedisPrefix, createTestDatabase, getFreePort, redisUrl, type TestDatabase } from './test-env.ts';

const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
});

async function withSql<T>(url: string, use: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => undefined });
  try {
    return await use(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function createDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  return database;
}

describe(createTestDatabase.name, () => {
  it('copies the migrated schema from the template', async () => {
    const { url } = await createDatabase();
    const tables = await withSql(url, (sql) => sql<{ name: string }[]>`
      select table_name as name from information_schema.tables where table_schema = 'public'`);
    expect(tables.map((table) => table.name)).toEqual(
      expect.arrayContaining(['conversations', 'sessions', 'messages', 'inbound_events', 'turns', 'outbox']),
    );
  });

  it('gives each call its own database', async () => {
    const [first, second] = await Promise.all([createDatabase(), createDatabase()]);
    expect(first.url).not.toBe(second.url);
    await withSql(first.url, (sql) => sql`create table harness_probe (id int)`);
    const inSecond = await withSql(second.url, (sql) => sql`select to_regclass('public.harness_probe') as found`);
    expect(inSecond[0]?.found).toBeNull();
  });

  it('drops the database even with a connection still open', async () => {
    const database = await createTestDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    await sql`select 1`;
    await database.drop();
    await sql.end({ timeout: 1 }).catch(() => undefined);
    const name = new URL(database.url).pathname.slice(1);
    const left = await withSql(database.url.replace(/\/[^/]+$/, '/postgres'), (admin) =>
      admin`select 1 from pg_database where datname = ${name}`,
    );
    expect(left).toHaveLength(0);
  });
});

describe(createRedisPrefix.name, () => {
  it('returns a fresh prefix that REDIS_PREFIX accepts', () => {
    const prefixes = new Set(Array.from({ length: 50 }, () => createRedisPrefix()));
    expect(prefixes.size).toBe(50);
    for (const prefix of prefixes) expect(prefix).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
  });
});

describe(redisUrl.name, () => {
  it('points at a Redis that answers PING and never evicts', async () => {
    const client = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      client.disconnect();
    }
  });
});

describe(getFreePort.name, () => {
  it('returns a port nobody listens on', async () => {
    const port = await getFreePort();
    expect(port).toBeGreaterThan(0);
    expect(port).toBeLessThan(65536);
  });
});

describe(startPostgres.name, () => {
  it('comes back on the same port with its data after stop() and start()', async () => {
    const server = await startPostgres();
    cleanups.push(() => server.destroy());
    await withSql(server.adminUrl, async (sql) => {
      await sql`create table survivor (note text)`;
      await sql`insert into survivor values ('kept')`;
    });

    await server.stop();
    await expect(withSql(server.adminUrl, (sql) => sql`select 1`)).rejects.toThrow();
    await server.start();

    const rows = await withSql(server.adminUrl, (sql) => sql<{ note: string }[]>`select note from survivor`);
    expect(rows.map((row) => row.note)).toEqual(['kept']);
    expect(new URL(server.adminUrl).port).toBe(String(server.port));
  });
});

describe(startRedis.name, () => {
  it('comes back on the same port after stop() and start()', async () => {
    const server = await startRedis();
    cleanups.push(() => server.destroy());
    await server.stop();
    await server.start();
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      client.disconnect();
    }
  });
});
