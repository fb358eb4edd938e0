import { EventEmitter } from 'node:events';

/** Everything the simulator records, as one stream: waiters and the SSE feed both read it. */
export interface SimEvent {
  type:
    | 'telegram.update'
    | 'telegram.poll'
    | 'telegram.delivery'
    | 'telegram.sent'
    | 'telegram.edited'
    | 'telegram.action'
    | 'telegram.callback_answer'
    | 'telegram.reaction'
    | 'slack.reaction'
    | 'discord.reaction'
    | 'slack.delivery'
    | 'slack.sent'
    | 'slack.edited'
    | 'slack.interaction'
    | 'slack.response'
    | 'model.request'
    | 'model.finished'
    | 'model.aborted'
    | 'discord.dispatch'
    | 'discord.gateway'
    | 'discord.sent'
    | 'discord.edited'
    | 'discord.typing'
    | 'discord.interaction'
    | 'media.download'
    | 'sim.reset';
  at: number;
  data: unknown;
}

export const simEventName = 'event';

/**
 * One emitter for every record. Waiters subscribe, re-check their condition on
 * each event and unsubscribe, so there is no polling anywhere in the sim.
 */
export class EventHub extends EventEmitter {
  constructor() {
    super();
    // Every long-poll is one listener; a load test holds hundreds at once.
    this.setMaxListeners(0);
  }

  publish(type: SimEvent['type'], data: unknown): void {
    const event: SimEvent = { type, at: Date.now(), data };
    this.emit(simEventName, event);
  }
}
