import { createHash } from 'node:crypto';
import type { InputImage, Transcriber } from '@switchboard/agent';
import {
  cutDocumentText,
  describeDocument,
  describeImage,
  describeUnreadFile,
  fitsTurnBudget,
  joinUserText,
  mediaNotices,
  normaliseText,
  planAttachment,
  type InboundAttachment,
  type MediaNoticeReason,
  type MediaTurnSpent,
} from '@switchboard/core';
import { recordAttachmentHashes, type InboundEventRow } from '@switchboard/db';
import { PlatformError } from '@switchboard/platforms';
import type { WorkerContext } from '../worker-context.ts';

/** A turn's input once its files are read. */
export interface ResolvedInput {
  /** Every input event, in order; an event with files carries the text they became (what the transcript keeps). */
  events: InboundEventRow[];
  /** Events that reach the model nothing: their file was refused or failed. Taken by the turn, kept out of the transcript. */
  dropped: ReadonlySet<number>;
  /** The images of each event by id, for this turn's request only. */
  images: ReadonlyMap<number, InputImage[]>;
  /** One short reply per dropped event. */
  notices: string[];
}

/** One event's files, read: its new text and images, or why it reaches the model nothing. */
type EventOutcome = { kind: 'read'; text: string; images: InputImage[]; attachments: InboundAttachment[] } | { kind: 'refused'; reason: MediaNoticeReason };

/**
 * Fetches (and transcribes) the files of a turn's input before its first
 * model call: never in the gateway, which must answer webhooks at once. Each
 * fetch is bounded by MEDIA_MAX_BYTES and MEDIA_FETCH_TIMEOUT_MS and by the
 * turn's own stop; a failure costs that message one short reply and never the
 * input behind it. Nothing here logs a file's bytes, text or URL.
 */
/** The refusals a stopped turn's abort can cause (a download or a transcription cut short); the others are the file's own. */
const refusalsAStopCanCause: ReadonlySet<MediaNoticeReason> = new Set(['fetch_failed', 'transcribe_failed']);

export async function resolveMedia(ctx: Pick<WorkerContext, 'config' | 'db' | 'log' | 'media'>, platform: string, input: InboundEventRow[], signal: AbortSignal): Promise<ResolvedInput> {
  const events: InboundEventRow[] = [];
  const dropped = new Set<number>();
  const images = new Map<number, InputImage[]>();
  const notices: string[] = [];
  // What the turn's files have cost so far, against MEDIA_TURN_MAX_BYTES and MEDIA_TURN_MAX_IMAGES.
  const spent: MediaTurnSpent = { bytes: 0, images: 0 };
  for (const event of input) {
    const attachments = event.attachments ?? [];
    if (attachments.length === 0) {
      events.push(event);
      continue;
    }
    const outcome = await readEventFiles(ctx, { platform, event, attachments, turnSignal: signal, spent });
    if (outcome.kind === 'refused' && signal.aborted && refusalsAStopCanCause.has(outcome.reason)) {
      // Stopped while fetching (/stop, an interrupt, shutdown): like any input of a stopped turn the message stays in the
      // transcript, here as what it was (caption and "[image: …, not read]"), and nothing is said about the file.
      // A file refused on its own terms (too large, unsupported, voice off) is answered even then: the stop did not cause it.
      events.push({ ...event, text: joinUserText(event.text, attachments.map(describeUnreadFile)) });
      continue;
    }
    if (outcome.kind === 'refused') {
      dropped.add(event.id);
      notices.push(mediaNotices[outcome.reason]);
      events.push({ ...event, text: '' });
      continue;
    }
    events.push({ ...event, text: outcome.text, attachments: outcome.attachments });
    if (outcome.images.length > 0) images.set(event.id, outcome.images);
    await recordAttachmentHashes(ctx.db, event.id, outcome.attachments).catch((err: unknown) =>
      ctx.log.warn({ err, inboundEventId: event.id }, 'attachment hashes not recorded; the turn goes on'),
    );
  }
  return { events, dropped, images, notices };
}

/** One event's files to read, and what the turn's files have spent so far (updated here). */
interface EventFiles {
  platform: string;
  event: InboundEventRow;
  attachments: readonly InboundAttachment[];
  turnSignal: AbortSignal;
  spent: MediaTurnSpent;
}

async function readEventFiles(ctx: Pick<WorkerContext, 'config' | 'log' | 'media'>, request: EventFiles): Promise<EventOutcome> {
  const { platform, event, attachments, turnSignal, spent } = request;
  const { config, media } = ctx;
  const budget = { maxBytes: config.MEDIA_TURN_MAX_BYTES, maxImages: config.MEDIA_TURN_MAX_IMAGES, maxDocumentChars: config.MEDIA_DOCUMENT_MAX_CHARS };
  const parts: string[] = [];
  const images: InputImage[] = [];
  const read: InboundAttachment[] = [];
  const fetcher = media.fetchers.get(platform);
  for (const attachment of attachments) {
    const plan = planAttachment(attachment, { maxBytes: config.MEDIA_MAX_BYTES, transcription: media.transcribe !== undefined });
    const log = { inboundEventId: event.id, platform, kind: attachment.kind, size: attachment.size };
    if (plan.kind === 'refuse') {
      ctx.log.info({ ...log, reason: plan.reason }, 'file refused before download');
      return { kind: 'refused', reason: plan.reason };
    }
    if (!fitsTurnBudget(spent, budget, { kind: plan.kind, size: attachment.size })) {
      ctx.log.info({ ...log, spent }, 'file refused: over the turn\'s media budget');
      return { kind: 'refused', reason: 'over_budget' };
    }
    if (!fetcher) return { kind: 'refused', reason: 'fetch_failed' };
    let bytes: Buffer;
    try {
      bytes = await fetcher.fetchFile(attachment, { maxBytes: config.MEDIA_MAX_BYTES, signal: AbortSignal.any([turnSignal, AbortSignal.timeout(config.MEDIA_FETCH_TIMEOUT_MS)]) });
    } catch (error) {
      const code = error instanceof PlatformError ? error.code : 'FILE_FETCH_FAILED';
      ctx.log.warn({ ...log, code, stopped: turnSignal.aborted }, 'file not fetched');
      return { kind: 'refused', reason: code === 'FILE_TOO_LARGE' ? 'too_large' : code === 'FILE_REFUSED' ? 'not_hosted' : 'fetch_failed' };
    }
    // The announced size may be missing or wrong: the bytes themselves are what the turn spends.
    if (!fitsTurnBudget(spent, budget, { kind: plan.kind, size: bytes.byteLength })) {
      ctx.log.info({ ...log, spent, downloaded: bytes.byteLength }, 'file refused: over the turn\'s media budget');
      return { kind: 'refused', reason: 'over_budget' };
    }
    spent.bytes += bytes.byteLength;
    if (plan.kind === 'image') spent.images += 1;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    read.push({ ...attachment, size: bytes.byteLength, sha256 });
    if (plan.kind === 'image') {
      images.push({ dataUrl: `data:${attachment.mime ?? 'image/jpeg'};base64,${bytes.toString('base64')}` });
      parts.push(describeImage(attachment.name, sha256));
    } else if (plan.kind === 'text') {
      parts.push(describeDocument(attachment.name, cutDocumentText(normaliseText(bytes.toString('utf8')), budget.maxDocumentChars)));
    } else {
      const transcript = await transcribeVoice(ctx, { attachment, bytes, turnSignal, log });
      if (transcript === null) return { kind: 'refused', reason: 'transcribe_failed' };
      parts.push(transcript);
    }
  }
  return { kind: 'read', text: joinUserText(event.text, parts), images, attachments: read };
}

/** A voice file to transcribe: its attachment and bytes, the turn's stop, and the fields its log lines carry. */
interface VoiceFile {
  attachment: InboundAttachment;
  bytes: Buffer;
  turnSignal: AbortSignal;
  log: Record<string, unknown>;
}

async function transcribeVoice(ctx: Pick<WorkerContext, 'config' | 'log' | 'media'>, voice: VoiceFile): Promise<string | null> {
  const { attachment, bytes, turnSignal, log } = voice;
  const transcribe = ctx.media.transcribe as Transcriber;
  try {
    const signal = AbortSignal.any([turnSignal, AbortSignal.timeout(ctx.config.TRANSCRIBE_TIMEOUT_MS)]);
    const text = normaliseText(await transcribe({ bytes, name: attachment.name ?? 'voice.ogg', mime: attachment.mime }, signal)).trim();
    if (text !== '') return text;
    ctx.log.warn(log, 'transcription was empty; the user is told');
  } catch (error) {
    ctx.log.warn({ ...log, code: 'TRANSCRIBE_FAILED', message: error instanceof Error ? error.message : 'unknown' }, 'voice not transcribed; the user is told');
  }
  return null;
}
