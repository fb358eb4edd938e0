import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@switchboard/logger';
import {
  createDiscordGatewayConnection,
  type DiscordDispatch,
  type DiscordGatewayConnection,
  type DiscordGatewayOptions,
  type DiscordGatewaySession,
  type DiscordReady,
} from '@switchboard/platforms';
import { createSim, type Sim } from '@switchboard/sim';
import { armDiscordFault, discordGatewayAction, sendDiscordMessage, waitForDiscordGateway } from '../support/discord.ts';

const token = 'connection-test-token';

/** The adapter's Gateway client against the simulated Discord, with nothing else around it. */
describe('createDiscordGatewayConnection against the simulated Gateway', () => {
  let sim: Sim;
  let simUrl: string;
  const open: DiscordGatewayConnection[] = [];

  beforeAll(async () => {
    sim = await createSim({ discordBotToken: token, discordHeartbeatIntervalMs: 200, logLevel: 'silent' });
    simUrl = await sim.listen(0);
  });
  afterEach(async () => {
    for (const connection of open.splice(0)) await connection.close();
    // Close the session the test left behind, so the next test identifies anew.
    await discordGatewayAction(simUrl, { action: 'close', code: 4009 }).catch(() => undefined);
  });
  afterAll(async () => {
    await sim.close();
  });

  interface Harness {
    connection: DiscordGatewayConnection;
    handled: DiscordDispatch[];
    ready: Promise<DiscordReady>;
    /** Resolves once `count` MESSAGE_CREATEs were handled. */
    handledCount(count: number): Promise<void>;
    fatal: Promise<{ code: number; reason: string }>;
  }

  function start(overrides: Partial<DiscordGatewayOptions> = {}): Harness {
    const handled: DiscordDispatch[] = [];
    let waiters: (() => void)[] = [];
    let onReady!: (ready: DiscordReady) => void;
    let onFatal!: (failure: { code: number; reason: string }) => void;
    const ready = new Promise<DiscordReady>((resolve) => (onReady = resolve));
    const fatal = new Promise<{ code: number; reason: string }>((resolve) => (onFatal = resolve));
    const connection = createDiscordGatewayConnection({
      token,
      apiUrl: `${simUrl}/api`,
      log: createLogger('discord-connection-test', 'silent'),
      invalidSessionDelayMs: { min: 10, max: 20 },
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      onReady,
      onFatal,
      onDispatch(event) {
        if (event.t !== 'MESSAGE_CREATE') return;
        handled.push(event);
        const wake = waiters;
        waiters = [];
        for (const fn of wake) fn();
      },
      ...overrides,
    });
    open.push(connection);
    connection.start();
    const handledCount = async (count: number) => {
      while (handled.filter((e) => e.t === 'MESSAGE_CREATE').length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    return { connection, handled, ready, handledCount, fatal };
  }

  const contents = (events: DiscordDispatch[]) => events.map((e) => (e.d as { content: string }).content);

  it('identifies with the message intents and hands over MESSAGE_CREATEs in order; READY gives the bot user', async () => {
    const before = sim.state.discord.gateway.state();
    const harness = start();
    const ready = await harness.ready;
    expect(ready).toMatchObject({ userId: '1100000000000000001', applicationId: '1100000000000000001' });
    expect(sim.state.discord.gateway.state().identifies).toBe(before.identifies + 1);
    for (const i of [1, 2, 3]) await sendDiscordMessage(simUrl, { channelId: '700', content: `m${i}` });
    await harness.handledCount(3);
    expect(contents(harness.handled)).toEqual(['m1', 'm2', 'm3']);
    expect(harness.handled.map((e) => e.s)).toEqual([...harness.handled.map((e) => e.s)].sort((a, b) => a - b));
  });

  it('detects a zombie connection, closes it with a resumable code and resumes without losing or repeating events', async () => {
    const harness = start();
    await harness.ready;
    await sendDiscordMessage(simUrl, { channelId: '701', content: 'before' });
    await harness.handledCount(1);
    const before = sim.state.discord.gateway.state();
    await discordGatewayAction(simUrl, { action: 'stop-acks' });
    await sendDiscordMessage(simUrl, { channelId: '701', content: 'during' });
    const after = await waitForDiscordGateway(simUrl, { resumes: before.resumes + 1, connected: true });
    expect(after.identifies).toBe(before.identifies);
    expect(after.last_close_code).toBe(4000);
    await harness.handledCount(2);
    await sendDiscordMessage(simUrl, { channelId: '701', content: 'after' });
    await harness.handledCount(3);
    expect(contents(harness.handled)).toEqual(['before', 'during', 'after']);
  });

  it('resumes after op 7 and after a dropped connection', async () => {
    const harness = start();
    await harness.ready;
    const before = sim.state.discord.gateway.state();
    await discordGatewayAction(simUrl, { action: 'reconnect' });
    await waitForDiscordGateway(simUrl, { resumes: before.resumes + 1, connected: true });
    await discordGatewayAction(simUrl, { action: 'drop' });
    const after = await waitForDiscordGateway(simUrl, { resumes: before.resumes + 2, connected: true });
    expect(after.identifies).toBe(before.identifies);
  });

  it('identifies anew after op 9 d:false', async () => {
    const harness = start();
    await harness.ready;
    const before = sim.state.discord.gateway.state();
    await discordGatewayAction(simUrl, { action: 'invalid-session' });
    const after = await waitForDiscordGateway(simUrl, { identifies: before.identifies + 1, connected: true });
    expect(after.session_id).not.toBe(before.session_id);
    await sendDiscordMessage(simUrl, { channelId: '702', content: 'new session' });
    await harness.handledCount(1);
  });

  it('resumes from the last handled event when handling fails, so the event is replayed', async () => {
    let failures = 1;
    const handled: string[] = [];
    let wake: (() => void) | undefined;
    const harness = start({
      onDispatch(event) {
        if (event.t !== 'MESSAGE_CREATE') return;
        const content = (event.d as { content: string }).content;
        if (content === 'fragile' && failures-- > 0) throw new Error('database unavailable');
        handled.push(content);
        wake?.();
      },
    });
    await harness.ready;
    await sendDiscordMessage(simUrl, { channelId: '703', content: 'fragile' });
    await sendDiscordMessage(simUrl, { channelId: '703', content: 'behind it' });
    while (handled.length < 2) await new Promise<void>((resolve) => (wake = resolve));
    expect(handled).toEqual(['fragile', 'behind it']);
  });

  it('hands its session to a successor through the session store, which resumes and gets what was missed', async () => {
    let stored: DiscordGatewaySession | undefined;
    const sessionStore = {
      load: async () => stored,
      save: async (session: DiscordGatewaySession | undefined) => {
        stored = session;
      },
    };
    const first = start({ sessionStore });
    await first.ready;
    await sendDiscordMessage(simUrl, { channelId: '704', content: 'seen by the first' });
    await first.handledCount(1);
    await first.connection.close();
    open.splice(open.indexOf(first.connection), 1);
    expect(stored?.seq).toBeGreaterThan(1);
    const before = sim.state.discord.gateway.state();
    await sendDiscordMessage(simUrl, { channelId: '704', content: 'sent between the two' });
    const second = start({ sessionStore });
    const after = await waitForDiscordGateway(simUrl, { resumes: before.resumes + 1, connected: true });
    expect(after.identifies).toBe(before.identifies);
    await second.handledCount(1);
    expect(contents(second.handled)).toEqual(['sent between the two']);
  });

  it('retries GET /gateway/bot with backoff while it fails, then connects', async () => {
    await armDiscordFault(simUrl, { route: 'gateway', kind: '503', times: 3 });
    const harness = start();
    await harness.ready;
    expect(sim.state.discord.store.faults).toEqual([]);
  });

  it('never reconnects after a fatal close code, naming it', async () => {
    const harness = start();
    await harness.ready;
    await discordGatewayAction(simUrl, { action: 'close', code: 4014 });
    const failure = await harness.fatal;
    expect(failure.code).toBe(4014);
    expect(failure.reason).toMatch(/MESSAGE_CONTENT/);
    expect(harness.connection.status).toBe('fatal');
    const connections = sim.state.discord.gateway.state().connections;
    // onFatal runs as the reconnect loop ends: there is no loop left to open another connection.
    await harness.connection.close();
    expect(sim.state.discord.gateway.state().connections).toBe(connections);
  });

  it('treats a 401 from GET /gateway/bot as a wrong token and stops', async () => {
    const harness = start({ token: 'wrong-token' });
    const failure = await harness.fatal;
    expect(failure.code).toBe(4004);
    expect(failure.reason).toMatch(/DISCORD_BOT_TOKEN/);
  });
});
