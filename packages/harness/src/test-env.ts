import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { HarnessError } from './services/harness-error.ts';

export { getFreePort } from './services/ports.ts';

// What the run's global setup (test/support/global-setup.ts) provides; read
// here, so the keys are declared next to their only reader.
declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the run's Postgres (database `postgres`). */
    pgAdminUrl: string;
    /** Migrated database that createTestDatabase() copies. */
    pgTemplateDb: string;
    /** The run's Redis; tests share it and keep apart by key prefix. */
    redisUrl: string;
  }
}

export interface TestDatabase {
  /** Connection URL of a fresh, migrated database only this caller uses. */
  url: string;
  /** Drops the database, ending any connection still open on it. */
  drop(): Promise<void>;
}

// Session-level advisory lock around CREATE DATABASE, taken across all test
// processes. Test-only, so it is kept out of packages/db's AdvisoryLock enum,
// but chosen outside its 0x5b0a_xxxx range.
const createDatabaseLock = 0x5b0a_7e57;
// SQLSTATE 55006 "source database is being accessed by other users".
const objectInUse = '55006';
const createAttempts = 20;

let sequence = 0;

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = provided('pgAdminUrl');
  const template = provided('pgTemplateDb');
  const name = `sb_test_${process.pid}_${++sequence}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    // Copying a template is only safe while no other backend touches it;
    // taking turns keeps parallel files from tripping over each other.
    await admin`select pg_advisory_lock(${createDatabaseLock})`;
    try {
      await createFromTemplate(admin, name, template);
    } finally {
      await admin`select pg_advisory_unlock(${createDatabaseLock})`;
    }
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropDatabase(adminUrl, name) };
}

/** A Redis key prefix no other test uses; valid as REDIS_PREFIX. */
export function createRedisPrefix(): string {
  return `sbt-${process.pid}-${++sequence}-${randomBytes(3).toString('hex')}`;
}

export function redisUrl(): string {
  return provided('redisUrl');
}

async function createFromTemplate(admin: postgres.Sql, name: string, template: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin`create database ${admin(name)} template ${admin(template)}`;
      return;
    } catch (error) {
      const inUse = (error as { code?: string }).code === objectInUse;
      if (!inUse || attempt >= createAttempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin`drop database if exists ${admin(name)} with (force)`;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

function provided<K extends 'pgAdminUrl' | 'pgTemplateDb' | 'redisUrl'>(key: K): string {
  const value = inject(key);
  if (!value) {
    throw new HarnessError(
      'NOT_PROVIDED',
      `${key} was not provided: run tests with vitest and test/support/global-setup.ts as globalSetup`,
    );
  }
  return value;
}
