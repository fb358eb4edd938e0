import type { EventHub } from './event-hub.ts';
import type { SlackFault, SlackSentRecord } from './slack-types.ts';
import { ReactionBook } from './reaction-book.ts';

export interface SlackOptions {
  /** When set, Web API calls with another token get `invalid_auth`. */
  botToken?: string;
  /** Signs every event POSTed to the Request URL. */
  signingSecret?: string;
  /** The app's Request URL (the gateway's /webhooks/slack/events). */
  eventsUrl?: string;
  /** How long Slack waits for an event's answer before counting it failed (3 s). */
  ackTimeoutMs?: number;
}

/**
 * Everything the emulated Slack remembers. The ts and event_id counters
 * survive `reset()` and start from the clock: a gateway dedupes on event_id
 * across test cases and sim restarts, and a reused id would look like a retry.
 */
export class SlackStore {
  readonly options: SlackOptions;
  requestUrl: string | undefined;
  sent: SlackSentRecord[] = [];
  faults: SlackFault[] = [];
  /** The bot's reactions now, by `channel:ts` (reactions.add / reactions.remove). */
  readonly reactions = new ReactionBook();
  /** What the app posted to the response_url of button presses. */
  responses: { response_id: string; body: unknown; at: number }[] = [];

  private readonly sentByChannel = new Map<string, SlackSentRecord[]>();
  private lastTsMicros = 0;
  private nextEventNumber = Date.now() * 100;
  private nextResponseId = 1;

  constructor(
    options: SlackOptions,
    private readonly hub: EventHub,
  ) {
    this.options = options;
    this.requestUrl = options.eventsUrl;
  }

  get ackTimeoutMs(): number {
    return this.options.ackTimeoutMs ?? 3000;
  }

  /** A message ts, "seconds.micros", unique and increasing across the workspace like Slack's. */
  takeTs(): string {
    this.lastTsMicros = Math.max(Date.now() * 1000, this.lastTsMicros + 1);
    const seconds = Math.floor(this.lastTsMicros / 1_000_000);
    return `${seconds}.${String(this.lastTsMicros % 1_000_000).padStart(6, '0')}`;
  }

  /** `Ev` + fixed-width base 36, so ids also sort in the order they were made. */
  takeEventId(): string {
    return `Ev${(this.nextEventNumber++).toString(36).toUpperCase().padStart(11, '0')}`;
  }

  takeResponseId(): string {
    return `R${this.nextResponseId++}`;
  }

  /** The Interactivity Request URL: the gateway serves it beside the events URL. */
  interactionsUrl(): string | undefined {
    return this.requestUrl?.replace(/\/events$/, '/interactions');
  }

  recordSent(record: SlackSentRecord): void {
    this.sent.push(record);
    const list = this.sentByChannel.get(record.channel) ?? [];
    list.push(record);
    this.sentByChannel.set(record.channel, list);
    this.hub.publish('slack.sent', record);
  }

  findSent(channel: string, ts: string): SlackSentRecord | undefined {
    return this.sentByChannel.get(channel)?.find((record) => record.ts === ts);
  }

  sentTo(channel: string | undefined): SlackSentRecord[] {
    if (channel === undefined) return this.sent;
    return this.sentByChannel.get(channel) ?? [];
  }

  recordEdit(record: SlackSentRecord): void {
    this.hub.publish('slack.edited', record);
  }

  /** Consumes one use of the first fault armed for `method` (or for every method, '*'). */
  takeFault(method: string): SlackFault | undefined {
    const name = method.toLowerCase();
    const index = this.faults.findIndex((fault) => fault.method === name || fault.method === '*');
    if (index < 0) return undefined;
    const fault = this.faults[index] as SlackFault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /** The Request URL is app configuration on Slack, like the signing secret, so it survives a reset. */
  reset(): void {
    this.sent = [];
    this.faults = [];
    this.responses = [];
    this.reactions.clear();
    this.sentByChannel.clear();
  }
}
