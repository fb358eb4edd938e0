import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a user's file may be downloaded from, per platform (issue 30,
 * finding 2). A file URL comes from the platform's answer (Slack's
 * files.info, a Discord attachment), and a user controls more of it than it
 * seems: a Slack "remote file" carries any URL its sharer chose. So a
 * download goes only to the platform's own file hosts, and the bot's
 * credential only to the hosts that need it:
 *
 * - Telegram: the configured API root (the file URL is built from it and
 *   carries the token in its path);
 * - Slack: `https://files.slack.com` (the only host `url_private_download`
 *   names), with the bot token;
 * - Discord: its CDN hosts, without any token.
 *
 * A configured API URL that is not the platform's own (the simulator, a
 * proxy the operator runs) adds its origin to that platform's list: that is
 * the operator's choice, and the only way a loopback or private address is
 * ever reached. Every redirect hop is checked again.
 */
export interface FileHosts {
  /** Origins a download may reach (scheme://host:port). */
  readonly allowed: ReadonlySet<string>;
  /** Of those, the origins the platform's credential may be sent to. */
  readonly credentialed: ReadonlySet<string>;
  /** Host names the operator configured (an API URL that is not the platform's own): they may be private addresses. */
  readonly operatorHosts: ReadonlySet<string>;
}

const slackFileOrigin = 'https://files.slack.com';
const discordCdnOrigins = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];
const platformApiOrigins = new Set(['https://api.telegram.org', 'https://slack.com', 'https://discord.com']);

export function telegramFileHosts(apiRoot: string): FileHosts {
  const { origin } = new URL(apiRoot);
  return { allowed: new Set([origin]), credentialed: new Set([origin]), operatorHosts: operatorHostsOf(apiRoot) };
}

export function slackFileHosts(apiUrl: string): FileHosts {
  const origins = [slackFileOrigin, ...operatorOrigins(apiUrl)];
  return { allowed: new Set(origins), credentialed: new Set(origins), operatorHosts: operatorHostsOf(apiUrl) };
}

export function discordFileHosts(apiUrl: string): FileHosts {
  return { allowed: new Set([...discordCdnOrigins, ...operatorOrigins(apiUrl)]), credentialed: new Set(), operatorHosts: operatorHostsOf(apiUrl) };
}

/** The configured API URL's origin when it is not the platform's own: the operator pointed it elsewhere on purpose. */
function operatorOrigins(apiUrl: string): string[] {
  const { origin } = new URL(apiUrl);
  return platformApiOrigins.has(origin) ? [] : [origin];
}

function operatorHostsOf(apiUrl: string): Set<string> {
  const url = new URL(apiUrl);
  return new Set(platformApiOrigins.has(url.origin) ? [] : [url.hostname]);
}

export type FileUrlCheck = { ok: true; url: URL; credential: boolean } | { ok: false; reason: string };

/** Whether `raw` (absolute, or relative to `base` for a redirect's Location) may be fetched, and with the credential. */
export function checkFileUrl(hosts: FileHosts, raw: string, base?: string): FileUrlCheck {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return { ok: false, reason: 'not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: `scheme ${url.protocol} refused` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials in the URL refused' };
  if (!hosts.allowed.has(url.origin)) return { ok: false, reason: `host ${url.host} is not one of the platform's file hosts` };
  return { ok: true, url, credential: hosts.credentialed.has(url.origin) };
}

const privateRanges = new BlockList();
for (const [net, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  privateRanges.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) privateRanges.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, shared, multicast and unspecified addresses (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return privateRanges.check(mapped, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A second line behind the allow-list: a platform host whose name resolves
 * to a private address (a poisoned resolver, a misconfigured proxy) is
 * refused unless the operator's own configured origin is that host. The
 * connection resolves the name again, so this narrows, not closes, a
 * rebinding window; the allow-list is the guard that holds.
 */
export async function resolvesToPrivate(url: URL, hosts: FileHosts): Promise<boolean> {
  if (hosts.operatorHosts.has(url.hostname)) return false;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isPrivateAddress(host);
  const addresses = await lookup(host, { all: true });
  return addresses.some((a) => isPrivateAddress(a.address));
}
