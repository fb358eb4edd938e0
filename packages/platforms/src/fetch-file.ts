import type { InboundAttachment, Platform } from '@switchboard/core';
import { Api } from 'grammy';
import { PlatformError } from './errors.ts';
import { loadOnFirstUse } from './load-on-first-use.ts';
import { checkFileUrl, discordFileHosts, resolvesToPrivate, slackFileHosts, telegramFileHosts, type FileHosts } from './file-hosts.ts';
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

/** One download: where, within which limits, what to call it in errors, and the credential for the hosts that get it. */
export interface DownloadRequest {
  url: string;
  hosts: FileHosts;
  limits: FetchLimits;
  what: string;
  /** Headers sent only to the hosts' credentialed origins (Slack's bot token). */
  credential?: Record<string, string>;
}

/** Redirect hops a download follows (each one checked against the platform's hosts). */
const maxRedirects = 5;

/**
 * GET with a byte cap enforced while reading, so a server that announces no
 * length (or a wrong one) still cannot make the worker hold more than
 * `maxBytes`; only to the platform's file hosts (file-hosts.ts), following
 * redirects by hand so each hop is checked and the credential never leaves
 * the hosts that need it. Plain fetch: the platforms' SDKs have no bounded
 * download, and fetch's own redirect following would carry the header on.
 */
export async function downloadBounded(request: DownloadRequest): Promise<Buffer> {
  const { limits, what } = request;
  const response = await fetchChecked(request);
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

async function fetchChecked(request: DownloadRequest): Promise<Response> {
  const { hosts, limits, what } = request;
  let target = request.url;
  let base: string | undefined;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const check = checkFileUrl(hosts, target, base);
    if (!check.ok) throw new PlatformError('FILE_REFUSED', `${what}: ${check.reason}`);
    const headers = check.credential ? (request.credential ?? {}) : {};
    let response: Response;
    try {
      if (await resolvesToPrivate(check.url, hosts)) throw new PlatformError('FILE_REFUSED', `${what}: host ${check.url.host} resolves to a private address`);
      response = await fetch(check.url, { headers, signal: limits.signal, redirect: 'manual' });
    } catch (error) {
      if (error instanceof PlatformError) throw error;
      throw new PlatformError('FILE_FETCH_FAILED', `${what}: download failed (network error or timeout)`);
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    base = check.url.href;
    target = location;
  }
  throw new PlatformError('FILE_FETCH_FAILED', `${what}: more than ${maxRedirects} redirects`);
}

/** Telegram: getFile names the file's path, downloaded from `<apiRoot>/file/bot<token>/<path>` (Bot API, "getFile"). */
export function createTelegramFileFetcher(options: { token: string; apiRoot: string }): FileFetcher {
  const apiRoot = options.apiRoot.replace(/\/+$/, '');
  const api = new Api(options.token, { apiRoot });
  const hosts = telegramFileHosts(apiRoot);
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
      return downloadBounded({ url: `${apiRoot}/file/bot${options.token}/${path}`, hosts, limits, what: 'telegram file' });
    },
  };
}

/**
 * Slack: files.info names the private URL, downloaded with the bot token
 * (Slack, "Working with files"). Only a file hosted by Slack is read: a
 * remote file (`mode: 'external'`, `is_external`) is a link its sharer chose,
 * and Slack says never to send the token there; its `url_private` is that
 * link, so only `url_private_download` is used.
 */
export function createSlackFileFetcher(options: { token: string; apiUrl: string }): FileFetcher {
  // The caller's timeout bounds files.info too: the SDK's own retries would outlast it.
  // Made on the first file, so a process that never fetches a Slack file never loads the SDK.
  const client = loadOnFirstUse(() => createSlackClient({ token: options.token, apiUrl: options.apiUrl }));
  const hosts = slackFileHosts(options.apiUrl);
  return {
    platform: 'slack',
    async fetchFile(attachment, limits) {
      let file: { url_private_download?: string; size?: number; mode?: string; is_external?: boolean } | undefined;
      try {
        file = (await (await client()).files.info({ file: attachment.ref })).file;
      } catch {
        throw new PlatformError('FILE_FETCH_FAILED', 'slack files.info failed');
      }
      if (file?.is_external === true || file?.mode === 'external') throw new PlatformError('FILE_REFUSED', 'slack file: a remote file (not hosted by Slack) is not read');
      if (file?.size !== undefined && file.size > limits.maxBytes) throw new PlatformError('FILE_TOO_LARGE', `slack file: ${file.size} bytes is over the limit`);
      if (!file?.url_private_download) throw new PlatformError('FILE_FETCH_FAILED', 'slack files.info gave no url_private_download');
      return downloadBounded({ url: file.url_private_download, hosts, limits, what: 'slack file', credential: { authorization: `Bearer ${options.token}` } });
    },
  };
}

/** Discord: an attachment's URL is signed by Discord and fetched from its CDN without the bot token. */
export function createDiscordFileFetcher(options: { apiUrl: string }): FileFetcher {
  const hosts = discordFileHosts(options.apiUrl);
  return {
    platform: 'discord',
    async fetchFile(attachment, limits) {
      return downloadBounded({ url: attachment.ref, hosts, limits, what: 'discord attachment' });
    },
  };
}
