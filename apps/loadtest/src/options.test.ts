import { describe, expect, it } from 'vitest';
import { parseCliOptions } from './options.ts';

describe(parseCliOptions.name, () => {
  it('reads a spawn run with pacing, bursts and a platform list', () => {
    const result = parseCliOptions(['--spawn', '--gateways', '2', '--workers', '3', '--pacing', 'rate:250', '--burst-fraction', '0.25', '--platforms', 'telegram']);
    expect(result).toMatchObject({
      kind: 'run',
      options: { spawn: { gateways: 2, workers: 3 }, pacing: { kind: 'rate', turnsPerSecond: 250 }, burstFraction: 0.25, platforms: ['telegram'], conversations: 50 },
    });
  });

  it('leaves the conversation count open with a duration, so conversations repeat until it ends', () => {
    const result = parseCliOptions(['--sim-url', 'http://127.0.0.1:4010/', '--duration-s', '30', '--pacing', 'think:200']);
    expect(result).toMatchObject({ kind: 'run', options: { target: { simUrl: 'http://127.0.0.1:4010' }, durationS: 30, pacing: { kind: 'think', thinkMs: 200 } } });
    expect(result.kind === 'run' && result.options.conversations).toBeUndefined();
  });

  it('names every bad option in one error', () => {
    expect(() => parseCliOptions(['--spawn', '--concurrency', '0', '--pacing', 'fast', '--burst-fraction', '2'])).toThrow(
      /--concurrency must be at least 1[\s\S]*--pacing must be reply[\s\S]*--burst-fraction must be a number from 0 to 1/,
    );
  });

  it('takes a platform mix and refuses an unknown platform by name', () => {
    expect(parseCliOptions(['--spawn', '--platforms', 'telegram, Slack,discord'])).toMatchObject({ options: { platforms: ['telegram', 'slack', 'discord'] } });
    expect(() => parseCliOptions(['--spawn', '--platforms', 'telegram,irc'])).toThrow(/unknown platform "irc"/);
  });

  it('needs exactly one of --spawn and --sim-url', () => {
    expect(() => parseCliOptions([])).toThrow(/give --spawn .* or --sim-url/);
    expect(() => parseCliOptions(['--spawn', '--sim-url', 'http://127.0.0.1:1'])).toThrow(/not both/);
    expect(() => parseCliOptions(['--sim-url', 'http://127.0.0.1:1', '--workers', '2'])).toThrow(/need --spawn/);
  });

  it('rejects unknown flags', () => {
    expect(() => parseCliOptions(['--spawn', '--convos', '3'])).toThrow(/--convos/);
  });
});
