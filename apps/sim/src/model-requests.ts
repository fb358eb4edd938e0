import type { EventHub } from './event-hub.ts';
import { preciseNow } from './precise-clock.ts';

export interface ModelRequestRecord {
  id: number;
  receivedAt: number;
  body: unknown;
  stream: boolean;
  ruleIndex?: number;
  status?: number;
  finishedAt?: number;
  /** A 200 answer's headers were written: from here on the client may take the request as accepted. */
  respondedAt?: number;
  /** The client closed the connection before the response was finished. */
  abortedAt?: number;
}

export type RequestState = 'any' | 'finished' | 'aborted' | 'settled' | 'pending';

/** Every chat-completions request, in arrival order, with how it ended. */
export class ModelRequestStore {
  records: ModelRequestRecord[] = [];
  private nextId = 1;

  constructor(private readonly hub: EventHub) {}

  record(body: unknown): ModelRequestRecord {
    const stream = typeof body === 'object' && body !== null && (body as { stream?: unknown }).stream === true;
    const record: ModelRequestRecord = { id: this.nextId++, receivedAt: preciseNow(), body, stream };
    this.records.push(record);
    this.hub.publish('model.request', record);
    return record;
  }

  markFinished(record: ModelRequestRecord, status: number): void {
    if (record.finishedAt !== undefined || record.abortedAt !== undefined) return;
    record.status = status;
    record.finishedAt = preciseNow();
    this.hub.publish('model.finished', record);
  }

  markResponded(record: ModelRequestRecord): void {
    record.respondedAt ??= preciseNow();
  }

  markAborted(record: ModelRequestRecord): void {
    if (record.finishedAt !== undefined || record.abortedAt !== undefined) return;
    record.abortedAt = preciseNow();
    this.hub.publish('model.aborted', record);
  }

  matching(state: RequestState): ModelRequestRecord[] {
    if (state === 'finished') return this.records.filter((record) => record.finishedAt !== undefined);
    if (state === 'aborted') return this.records.filter((record) => record.abortedAt !== undefined);
    if (state === 'settled') return this.records.filter((record) => record.finishedAt !== undefined || record.abortedAt !== undefined);
    if (state === 'pending') return this.records.filter((record) => record.finishedAt === undefined && record.abortedAt === undefined);
    return this.records;
  }

  clear(): void {
    this.records = [];
  }
}
