import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pickAllowedEnv, readProviderHosts, startCodexNetProxy, type CodexNetProxy } from '@switchboard/agent';
import type { WorkerConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/logger';
import { findOperatorCodexHome } from './codex-home.ts';

/**
 * The worker's side of CODEX_SANDBOX_NETWORK=provider (docs/codex.md, "The
 * child's network"; issue 30, finding 1): its children's one way out, a
 * proxy on a Unix socket in a 0700 directory of its own, passing only to the
 * model provider the operator's config.toml names and CODEX_SANDBOX_ALLOW_HOSTS.
 * Read once, as the worker starts: a changed provider takes a restart.
 */
export type NetConfig = Pick<WorkerConfig, 'CODEX_SANDBOX_ALLOW_HOSTS' | 'CODEX_ENV_PASSTHROUGH'>;

export interface CodexNet {
  socketPath: string;
  close(): Promise<void>;
}

export async function startCodexNet(config: NetConfig, log: Logger, from: { source: Readonly<Record<string, string | undefined>>; otherUids: boolean }): Promise<CodexNet> {
  const { source, otherUids } = from;
  const configToml = await readFile(join(findOperatorCodexHome(source), 'config.toml'), 'utf8').catch(() => null);
  // What the child itself would see (its allow-list): an OPENAI_BASE_URL counts only where it is passed through.
  const childEnv = pickAllowedEnv(source, config.CODEX_ENV_PASSTHROUGH);
  const hosts = readProviderHosts({ configToml, childEnv, allowHosts: config.CODEX_SANDBOX_ALLOW_HOSTS });
  const allowed = hosts.destinations.map((dest) => `${dest.host}:${dest.port}`);
  if (hosts.known) log.info({ allowed }, 'Codex children reach only their model provider and CODEX_SANDBOX_ALLOW_HOSTS (CODEX_SANDBOX_NETWORK=provider)');
  else log.warn({ provider: hosts.provider, allowed }, `the Codex provider "${hosts.provider}" has no base_url in config.toml: children reach only CODEX_SANDBOX_ALLOW_HOSTS (set base_url, or CODEX_SANDBOX_ALLOW_HOSTS=host:port)`);
  const dir = await mkdtemp(join(tmpdir(), 'sb-codex-net-'));
  // Children running as other uids (a root worker's) connect too: the directory unlisted, its name unguessable.
  if (otherUids) await chmod(dir, 0o711);
  // A warning the first time each destination is refused (what a child tried to reach is an operator's to know, and
  // may be an attack), then debug: Codex itself tries GitHub and ChatGPT at each start, which would flood the log.
  const warned = new Set<string>();
  const proxy: CodexNetProxy = await startCodexNetProxy({
    socketPath: join(dir, 'proxy.sock'),
    socketMode: otherUids ? 0o666 : 0o600,
    allowed: hosts.destinations,
    onRefused: (refusal) => {
      const key = `${refusal.host ?? ''}:${refusal.port ?? ''}`;
      const level = warned.has(key) || warned.size >= 1000 ? 'debug' : 'warn';
      warned.add(key);
      log[level]({ code: 'CODEX_NET_REFUSED', ...refusal }, 'a Codex child tried to reach a destination outside its model provider; refused');
    },
  });
  return {
    socketPath: proxy.socketPath,
    async close() {
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
