import { describe, expect, it } from 'vitest';
import { parseConfig } from './load-config.ts';
import { gatewayEnvSchema } from './schemas.ts';

describe('TRUST_PROXY', () => {
  const parse = (value?: string) => parseConfig(gatewayEnvSchema, value === undefined ? {} : { TRUST_PROXY: value }).TRUST_PROXY;

  it('trusts nobody unless told', () => {
    for (const value of [undefined, '', 'false', '0', '  false ']) expect(parse(value), String(value)).toBe(false);
  });

  it('reads true, a hop count, or a list of addresses, CIDRs and range names', () => {
    expect(parse('true')).toBe(true);
    expect(parse('2')).toBe(2);
    expect(parse('10.0.0.5')).toEqual(['10.0.0.5']);
    expect(parse('10.0.0.0/8, 172.16.0.0/12 ,fd00::/8,::1,loopback,uniquelocal')).toEqual(['10.0.0.0/8', '172.16.0.0/12', 'fd00::/8', '::1', 'loopback', 'uniquelocal']);
  });

  it('stops the gateway with one line on anything else', () => {
    for (const value of ['yes', '10.0.0.0/33', '::/129', '300.1.1.1', '10.0.0.1,,10.0.0.2', 'proxy.example', '10.0.0.0/8/1', '33', '-1']) {
      expect(() => parse(value), value).toThrow(/TRUST_PROXY must be/);
    }
  });
});

describe('ADMIN_COOKIE_SECURE', () => {
  it('is auto unless set to always or never', () => {
    expect(parseConfig(gatewayEnvSchema, {}).ADMIN_COOKIE_SECURE).toBe('auto');
    expect(parseConfig(gatewayEnvSchema, { ADMIN_COOKIE_SECURE: 'always' }).ADMIN_COOKIE_SECURE).toBe('always');
    expect(() => parseConfig(gatewayEnvSchema, { ADMIN_COOKIE_SECURE: 'yes' })).toThrow(/ADMIN_COOKIE_SECURE/);
  });
});
