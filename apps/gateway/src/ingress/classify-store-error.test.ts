import { describe, expect, it } from 'vitest';
import { classifyStoreError } from './classify-store-error.ts';

const pgError = (code: string) => Object.assign(new Error('postgres said no'), { name: 'PostgresError', code });

describe('classifyStoreError', () => {
  it('treats data exceptions (class 22) as permanent', () => {
    expect(classifyStoreError(pgError('22021'))).toEqual({ kind: 'invalid_input', reason: 'data_exception', sqlState: '22021' });
    expect(classifyStoreError(pgError('22P05'))).toEqual({ kind: 'invalid_input', reason: 'data_exception', sqlState: '22P05' });
  });

  it('treats integrity violations as permanent, except the duplicate-key race', () => {
    expect(classifyStoreError(pgError('23502'))).toMatchObject({ kind: 'invalid_input', reason: 'constraint_violation' });
    expect(classifyStoreError(pgError('23505'))).toEqual({ kind: 'outage' });
  });

  it('treats a value past a program limit and an unencodable key as permanent', () => {
    expect(classifyStoreError(pgError('54000'))).toMatchObject({ kind: 'invalid_input', reason: 'program_limit' });
    expect(classifyStoreError(new URIError('URI malformed'))).toEqual({ kind: 'invalid_input', reason: 'unencodable_key' });
  });

  it('reads the SQLSTATE through a drizzle query error, whose cause is the PostgresError (issue 30: the pairing store)', () => {
    const wrapped = (cause: unknown) => Object.assign(new Error('Failed query: insert into "pairings"'), { name: 'DrizzleQueryError', cause });
    expect(classifyStoreError(wrapped(pgError('54000')))).toEqual({ kind: 'invalid_input', reason: 'program_limit', sqlState: '54000' });
    expect(classifyStoreError(wrapped(pgError('08006')))).toEqual({ kind: 'outage' });
    expect(classifyStoreError(wrapped(new Error('write CONNECTION_CLOSED')))).toEqual({ kind: 'outage' });
  });

  it('keeps connection trouble, shutdowns and unknown errors as outages', () => {
    for (const code of ['08006', '57P01', '53300', '40001', 'CONNECTION_CLOSED', 'ECONNREFUSED', 'ETIMEDOUT'])
      expect(classifyStoreError(pgError(code))).toEqual({ kind: 'outage' });
    expect(classifyStoreError(new Error('boom'))).toEqual({ kind: 'outage' });
    expect(classifyStoreError(undefined)).toEqual({ kind: 'outage' });
  });
});
