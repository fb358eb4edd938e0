import { errorCodes } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { AdminTokenError, parseAdminTokens } from './admin-tokens.ts';

describe('AdminTokenError', () => {
  it('takes its code and retryable from the error catalog', () => {
    let thrown: unknown;
    try {
      parseAdminTokens('short');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AdminTokenError);
    const { code, retryable } = thrown as AdminTokenError;
    expect({ code, retryable, family: errorCodes[code].family }).toEqual({ code: 'ADMIN_TOKEN_INVALID', retryable: errorCodes.ADMIN_TOKEN_INVALID.retryable, family: 'config' });
  });

  it('still reads one token and name:token pairs', () => {
    expect(parseAdminTokens('alice:0123456789abcdef,ci:fedcba9876543210')).toEqual([
      { name: 'alice', token: '0123456789abcdef' },
      { name: 'ci', token: 'fedcba9876543210' },
    ]);
  });
});
