import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sleepUnlessAborted } from './abortable.ts';
import { multipartFilesOf } from './body-parsers.ts';
import { SimError } from './errors.ts';
import type { EventHub } from './event-hub.ts';
import { registerMethodFaultRoutes, type MethodFault } from './method-faults.ts';
import { parseBody } from './parse-body.ts';

/** A file a test uploaded, served as each platform serves files. */
export interface SimFile {
  id: string;
  name: string;
  mime: string;
  bytes: Buffer;
  /** What the platform announces as the file's size (a test may announce a wrong one). */
  announcedSize: number;
  /** Telegram's file_path for /file/bot<token>/<path>. */
  telegramPath: string;
  /** A Slack remote file: files.info answers `mode: 'external'` with this as its url_private (a link its sharer chose). */
  externalUrl?: string;
  /** files.info's url_private_download instead of the sim's own (a test of the worker's host check). */
  downloadUrl?: string;
  /** The download answers 302 to this URL instead of the bytes (a redirect to another host). */
  redirectTo?: string;
}

/** A transcription request as the sim received it (what a test asserts on; never logged). */
export interface TranscriptionRecord {
  model: string;
  fileName: string;
  size: number;
  sha256: string;
  authorization: string | undefined;
}

/**
 * Files for Telegram getFile + /file/bot<token>/<path>, Slack files.info +
 * url_private (bot token required), Discord attachment URLs, and the scripted
 * POST /v1/audio/transcriptions. Faults are keyed by 'telegram', 'slack',
 * 'discord' (the download) and 'transcribe'.
 */
export class MediaStore {
  files = new Map<string, SimFile>();
  faults: MethodFault[] = [];
  /** What /audio/transcriptions answers, by the sha256 of the audio; `defaultTranscript` otherwise. */
  transcripts = new Map<string, string>();
  defaultTranscript = 'transcribed speech';
  transcriptions: TranscriptionRecord[] = [];
  downloads: { platform: string; fileId: string }[] = [];
  private next = 1;

  constructor(private readonly hub: EventHub) {}

  add(input: { name: string; mime: string; bytes: Buffer; announcedSize?: number } & Pick<SimFile, 'externalUrl' | 'downloadUrl' | 'redirectTo'>): SimFile {
    const n = this.next++;
    const extension = input.name.includes('.') ? input.name.slice(input.name.lastIndexOf('.')) : '';
    const file: SimFile = {
      id: `F${String(n).padStart(8, '0')}`,
      name: input.name,
      mime: input.mime,
      bytes: input.bytes,
      announcedSize: input.announcedSize ?? input.bytes.byteLength,
      telegramPath: `files/file_${n}${extension}`,
      ...(input.externalUrl !== undefined ? { externalUrl: input.externalUrl } : {}),
      ...(input.downloadUrl !== undefined ? { downloadUrl: input.downloadUrl } : {}),
      ...(input.redirectTo !== undefined ? { redirectTo: input.redirectTo } : {}),
    };
    this.files.set(file.id, file);
    return file;
  }

  takeFault(method: string): MethodFault | undefined {
    const index = this.faults.findIndex((fault) => fault.method === method || fault.method === '*');
    if (index < 0) return undefined;
    const fault = this.faults[index] as MethodFault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }

  recordDownload(platform: string, fileId: string): void {
    this.downloads.push({ platform, fileId });
    this.hub.publish('media.download', { platform, fileId });
  }

  reset(): void {
    this.files.clear();
    this.faults = [];
    this.transcripts.clear();
    this.defaultTranscript = 'transcribed speech';
    this.transcriptions = [];
    this.downloads = [];
  }
}

/** The base URL the caller reached the sim at, for URLs it hands out (url_private, Discord attachment URLs). */
export function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? '127.0.0.1'}`;
}

export function slackFileUrl(base: string, file: SimFile): string {
  return `${base}/slack-files/${file.id}/${encodeURIComponent(file.name)}`;
}

export function discordAttachmentUrl(base: string, channelId: string, file: SimFile): string {
  // Discord's CDN signs attachment URLs (ex, is, hm); the sim serves them without checking.
  return `${base}/discord-cdn/attachments/${channelId}/${file.id}/${encodeURIComponent(file.name)}?ex=0&is=0&hm=sim`;
}

const uploadSchema = z
  .object({
    name: z.string().min(1),
    mime: z.string().min(1),
    /** The bytes, base64; or `text` for a text file. */
    base64: z.string().optional(),
    text: z.string().optional(),
    /** Announce another size than the bytes' (a platform that announces none or a wrong one). */
    announced_size: z.number().int().nonnegative().optional(),
    /** Slack: a remote file whose url_private is this link. */
    external_url: z.string().url().optional(),
    /** Slack: files.info names this url_private_download instead of the sim's. */
    download_url: z.string().url().optional(),
    /** Every platform: the download answers 302 to this URL. */
    redirect_to: z.string().url().optional(),
  })
  .strict()
  .refine((input) => (input.base64 === undefined) !== (input.text === undefined), 'give exactly one of base64 and text');

const transcriptSchema = z.object({ text: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/).optional() }).strict();

/** Download routes, the transcription endpoint and `/control/media/*`. */
export async function registerMediaRoutes(app: FastifyInstance, deps: { media: MediaStore; telegramToken?: string; slackToken?: string; shutdown: AbortSignal }): Promise<void> {
  const { media, shutdown } = deps;

  app.post('/control/media/files', async (request) => {
    const input = parseBody(uploadSchema, request.body);
    const bytes = input.base64 !== undefined ? Buffer.from(input.base64, 'base64') : Buffer.from(input.text ?? '', 'utf8');
    const file = media.add({
      name: input.name,
      mime: input.mime,
      bytes,
      ...(input.announced_size !== undefined ? { announcedSize: input.announced_size } : {}),
      ...(input.external_url !== undefined ? { externalUrl: input.external_url } : {}),
      ...(input.download_url !== undefined ? { downloadUrl: input.download_url } : {}),
      ...(input.redirect_to !== undefined ? { redirectTo: input.redirect_to } : {}),
    });
    return { id: file.id, size: file.announcedSize, sha256: createHash('sha256').update(bytes).digest('hex') };
  });
  app.post('/control/media/transcripts', async (request) => {
    const input = parseBody(transcriptSchema, request.body);
    if (input.sha256) media.transcripts.set(input.sha256, input.text);
    else media.defaultTranscript = input.text;
    return { ok: true };
  });
  app.get('/control/media/transcriptions', async () => media.transcriptions);
  app.get('/control/media/downloads', async () => media.downloads);
  registerMethodFaultRoutes(app, media, { path: '/control/media/faults', minRetryAfter: 1 });

  app.get<{ Params: { token: string; '*': string } }>('/file/bot:token/*', async (request, reply) => {
    if (deps.telegramToken !== undefined && request.params.token !== deps.telegramToken) return reply.code(401).send({ ok: false, error_code: 401, description: 'Unauthorized' });
    const file = [...media.files.values()].find((f) => f.telegramPath === request.params['*']);
    return serveFile(reply, file, { platform: 'telegram', media, shutdown });
  });
  app.get<{ Params: { id: string; name: string } }>('/slack-files/:id/:name', async (request, reply) => {
    // Slack serves url_private only with the bot token; without it, a login page (here: 403).
    if (deps.slackToken !== undefined && request.headers.authorization !== `Bearer ${deps.slackToken}`) return reply.code(403).send('forbidden');
    return serveFile(reply, media.files.get(request.params.id), { platform: 'slack', media, shutdown });
  });
  app.get<{ Params: { channel: string; id: string; name: string } }>('/discord-cdn/attachments/:channel/:id/:name', async (request, reply) =>
    serveFile(reply, media.files.get(request.params.id), { platform: 'discord', media, shutdown }),
  );

  app.post('/v1/audio/transcriptions', async (request, reply) => {
    const fault = media.takeFault('transcribe');
    if (fault && (await applyDownloadFault(fault, reply, shutdown))) return reply;
    const fields = (request.body ?? {}) as Record<string, string>;
    const audio = multipartFilesOf(request.body)?.get('file');
    if (!audio || !fields.model) return reply.code(400).send({ error: { message: 'file and model are required', type: 'invalid_request_error', param: null, code: null } });
    const sha256 = createHash('sha256').update(audio.bytes).digest('hex');
    media.transcriptions.push({ model: fields.model, fileName: audio.name, size: audio.bytes.byteLength, sha256, authorization: request.headers.authorization });
    return { text: media.transcripts.get(sha256) ?? media.defaultTranscript };
  });
}

/** Which platform's file host a download came through (its faults and download records are per platform). */
interface FileHost {
  platform: string;
  media: MediaStore;
  shutdown: AbortSignal;
}

/** Answers a download with the file's bytes, or the armed fault; true when the fault answered. */
async function serveFile(reply: FastifyReply, file: SimFile | undefined, host: FileHost): Promise<FastifyReply> {
  const { platform, media, shutdown } = host;
  if (!file) return reply.code(404).send('not found');
  if (file.redirectTo !== undefined) return reply.redirect(file.redirectTo, 302);
  const fault = media.takeFault(platform);
  if (fault && (await applyDownloadFault(fault, reply, shutdown))) return reply;
  media.recordDownload(platform, file.id);
  return reply.header('content-type', file.mime).send(file.bytes);
}

async function applyDownloadFault(fault: MethodFault, reply: FastifyReply, shutdown: AbortSignal): Promise<boolean> {
  if (fault.kind === 'delay') {
    await sleepUnlessAborted(fault.delayMs, shutdown);
    return false;
  }
  if (fault.kind === '429') reply.header('retry-after', String(fault.retryAfter));
  await reply.code(fault.status).send({ error: fault.kind === '429' ? 'rate_limited' : 'server_error' });
  return true;
}

/** Telegram `getFile`: the File object with the path the download takes. */
export function getTelegramFile(media: MediaStore, fileId: unknown): { file_id: string; file_unique_id: string; file_size: number; file_path: string } | undefined {
  const file = typeof fileId === 'string' ? media.files.get(fileId) : undefined;
  return file && { file_id: file.id, file_unique_id: `u${file.id}`, file_size: file.announcedSize, file_path: file.telegramPath };
}

/** Slack's file object, as files.info and message events carry it. */
export function slackFileObject(base: string, file: SimFile): Record<string, unknown> {
  const url = slackFileUrl(base, file);
  if (file.externalUrl !== undefined) {
    // A remote file (files.remote.add, or a linked Google Drive file): Slack hosts nothing, url_private is the sharer's link.
    return { id: file.id, created: Math.floor(Date.now() / 1000), name: file.name, title: file.name, mimetype: file.mime, size: file.announcedSize, mode: 'external', is_external: true, external_type: 'app', url_private: file.externalUrl };
  }
  return {
    id: file.id,
    created: Math.floor(Date.now() / 1000),
    name: file.name,
    title: file.name,
    mimetype: file.mime,
    filetype: file.name.split('.').pop() ?? 'binary',
    size: file.announcedSize,
    mode: 'hosted',
    is_external: false,
    url_private: url,
    url_private_download: file.downloadUrl ?? `${url}?download=1`,
  };
}

export function requireFile(media: MediaStore, id: string): SimFile {
  const file = media.files.get(id);
  if (!file) throw new SimError('SIM_NO_SUCH_FILE', `no file ${id}; upload it with POST /control/media/files first`, 404);
  return file;
}
