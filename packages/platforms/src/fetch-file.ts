import type { InboundAttachment, Platform } from '@switchboard/core';
import { Api } from 'grammy';
import { PlatformError } from './errors.ts';
import { createSlackClient } from './slack/slack-sender.ts';

/** What bounds one fetch: the byte cap (MEDIA_MAX_BYTES) and the abort (MEDIA_FETCH_TIMEOUT_MS, the turn's stop). */
export interface FetchLimits {
  maxBytes: number;
  signal: AbortSignal;
}

/**
 * Fetches a user's file with the platform's API. Throws PlatformError
 * FILE_TOO_LARGE (over `maxBytes`) or FILE_FETCH_FAILED (anything else). Error
 * messages never carry the file's URL: a Telegram file URL holds the bot token.
 */
export interface FileFetcher {
  readonly platform: Platform;
  fetchFile(attachment: InboundAttachment, limits: FetchLimits): Promise<Buffer>;
}

/**
 * GET with a byte cap enforced while reading, so a server that announces no
 * length (or a wrong one) still cannot make the worker hold more than
 * `maxBytes`. Plain fetch: the platforms' SDKs have no bounded download.
 */
export async function downloadBounded(url: string, limits: FetchLimits, what: string, headers: Record<string, string> = {}): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: limits.signal, redirect: 'follow' });
  } catch {
    throw new PlatformError('FILE_FETCH_FAILED', `${what}: download failed (network error or timeout)`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw new PlatformError('FILE_FETCH_FAILED', `${what}: download answered HTTP ${response.status}`);
  }
  const announced = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(announced) && announced > limits.maxBytes) {
    await response.body.cancel().catch(() => undefined);
    throw new PlatformError('FILE_TOO_LARGE', `${what}: ${announced} bytes is over the limit`);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new PlatformError('FILE_TOO_LARGE', `${what}: over the limit while downloading`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof PlatformError) throw error;
    throw new PlatformError('FILE_FETCH_FAILED', `${what}: download cut off (network error or timeout)`);
  }
  return Buffer.concat(chunks, total);
}

/** Telegram: getFile names the file's path, downloaded from `<apiRoot>/file/bot<token>/<path>` (Bot API, "getFile"). */
export function createTelegramFileFetcher(options: { token: string; apiRoot: string }): FileFetcher {
  const apiRoot = options.apiRoot.replace(/\/+$/, '');
  const api = new Api(options.token, { apiRoot });
  return {
    platform: 'telegram',
    async fetchFile(attachment, limits) {
      let path: string | undefined;
      let size: number | undefined;
      try {
        const file = await api.getFile(attachment.ref, limits.signal as Parameters<Api['getFile']>[1]);
        path = file.file_path;
        size = file.file_size;
      } catch {
        throw new PlatformError('FILE_FETCH_FAILED', 'telegram getFile failed');
      }
      if (size !== undefined && size > limits.maxBytes) throw new PlatformError('FILE_TOO_LARGE', `telegram file: ${size} bytes is over the limit`);
      // Telegram gives no path for files over the Bot API's own 20 MB download limit.
      if (!path) throw new PlatformError('FILE_FETCH_FAILED', 'telegram getFile gave no file_path');
      return downloadBounded(`${apiRoot}/file/bot${options.token}/${path}`, limits, 'telegram file');
    },
  };
}

/** Slack: files.info names the private URL, downloaded with the bot token (Slack, "Working with files"). */
export function createSlackFileFetcher(options: { token: string; apiUrl: string }): FileFetcher {
  // The caller's timeout bounds files.info too: the SDK's own retries would outlast it.
  const client = createSlackClient({ token: options.token, apiUrl: options.apiUrl });
  return {
    platform: 'slack',
    async fetchFile(attachment, limits) {
      let url: string | undefined;
      let size: number | undefined;
      try {
        const info = await client.files.info({ file: attachment.ref });
        url = info.file?.url_private_download ?? info.file?.url_private;
        size = info.file?.size;
      } catch {
        throw new PlatformError('FILE_FETCH_FAILED', 'slack files.info failed');
      }
      if (size !== undefined && size > limits.maxBytes) throw new PlatformError('FILE_TOO_LARGE', `slack file: ${size} bytes is over the limit`);
      if (!url) throw new PlatformError('FILE_FETCH_FAILED', 'slack files.info gave no private URL');
      return downloadBounded(url, limits, 'slack file', { authorization: `Bearer ${options.token}` });
    },
  };
}

/** Discord: an attachment's URL is signed by Discord and fetched without the bot token. */
export function createDiscordFileFetcher(): FileFetcher {
  return {
    platform: 'discord',
    async fetchFile(attachment, limits) {
      if (!/^https?:\/\//i.test(attachment.ref)) throw new PlatformError('FILE_FETCH_FAILED', 'discord attachment URL is not http(s)');
      return downloadBounded(attachment.ref, limits, 'discord attachment');
    },
  };
}
