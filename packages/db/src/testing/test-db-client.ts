import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@switchboard/harness/test-env';
import { createDbClient, type DbClient } from '../client.ts';

export interface TestDbClient {
  /** The migrated throwaway database's URL. */
  readonly url: string;
  readonly client: DbClient;
}

/**
 * A fresh migrated database and a client on it for the calling test file,
 * created before its tests and dropped after them. Read the fields inside
 * tests or hooks: they exist only once beforeAll has run.
 */
export function useTestDbClient(options: { max?: number } = { max: 2 }): TestDbClient {
  let database: TestDatabase | undefined;
  let client: DbClient | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = createDbClient(database.url, options);
  });
  afterAll(async () => {
    await client?.close();
    await database?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the test database is created in beforeAll; use it inside tests');
    return value;
  };
  return {
    get url() {
      return ready(database).url;
    },
    get client() {
      return ready(client);
    },
  };
}
