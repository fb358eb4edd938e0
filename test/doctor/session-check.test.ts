import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPostgresSession } from '../../scripts/lib/doctor-checks.ts';
import { createTestDatabase, getFreePort, type TestDatabase } from '../support/test-env.ts';

// Issue 33, point 3: `npm run doctor` names the direct connection behind a transaction pooler, or why it cannot.
describe('the doctor on DATABASE_SESSION_URL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('skips it unset, passes a reachable one, fails an unreachable or invalid one with a fix', async () => {
    expect((await checkPostgresSession({})).status).toBe('skip');
    expect(await checkPostgresSession({ DATABASE_SESSION_URL: database.url })).toMatchObject({ status: 'ok' });
    const closed = await checkPostgresSession({ DATABASE_SESSION_URL: `postgres://postgres@127.0.0.1:${await getFreePort()}/x` });
    expect(closed).toMatchObject({ status: 'fail', fix: expect.stringContaining('not the pooler') });
    expect(await checkPostgresSession({ DATABASE_SESSION_URL: 'mysql://nope' })).toMatchObject({ status: 'fail', detail: 'DATABASE_SESSION_URL is invalid' });
  });
});
