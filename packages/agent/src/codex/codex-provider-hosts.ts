/**
 * Where a Codex child may connect under `CODEX_SANDBOX_NETWORK=provider`
 * (docs/codex.md, "The child's network"): its model provider's address, read
 * from the operator's `config.toml`, and what the operator added with
 * `CODEX_SANDBOX_ALLOW_HOSTS`. Pure: the worker reads the file.
 */
import { readModelProvider, readTomlStrings } from './codex-config-toml.ts';

/** One host and port a child may reach through the worker's proxy; the host lower-case, an IPv6 address without brackets. */
export interface NetDestination {
  host: string;
  port: number;
}

/**
 * Codex's built-in `openai` provider: the API, and for a ChatGPT login the
 * ChatGPT backend and the login's token refresh. OPENAI_BASE_URL, where the
 * child has it, replaces the API's address.
 */
const openaiHosts = ['https://api.openai.com', 'https://chatgpt.com', 'https://auth.openai.com'];

export interface ProviderHostsInput {
  configToml: string | null;
  /** The child's environment (the allow-list): OPENAI_BASE_URL, if passed through. */
  childEnv: Readonly<Record<string, string | undefined>>;
  /** CODEX_SANDBOX_ALLOW_HOSTS, as `host:port`. */
  allowHosts: readonly string[];
}

export type ProviderHosts = { destinations: NetDestination[]; provider: string; known: boolean };

/**
 * The destinations a child may reach. `known` is false when the chosen
 * provider is neither `openai` nor one with a `base_url` (a built-in local
 * provider): the worker says so at start, as the child can then reach only
 * CODEX_SANDBOX_ALLOW_HOSTS.
 */
export function readProviderHosts(input: ProviderHostsInput): ProviderHosts {
  const tables = readTomlStrings(input.configToml ?? '');
  const provider = readModelProvider(tables);
  const baseUrl = tables.get(`model_providers.${provider}`)?.get('base_url');
  const urls: string[] = baseUrl ? [baseUrl] : provider === 'openai' ? [input.childEnv.OPENAI_BASE_URL ?? (openaiHosts[0] as string), ...openaiHosts.slice(1)] : [];
  const destinations = [...urls.map(parseOrigin), ...input.allowHosts.map((entry) => parseOrigin(`tcp://${entry}`))].filter((dest): dest is NetDestination => dest !== undefined);
  return { destinations: dedupe(destinations), provider, known: urls.length > 0 };
}

/** The host and port of a URL (a scheme's default port where none is given); undefined for what is not one. */
export function parseOrigin(url: string): NetDestination | undefined {
  try {
    const parsed = new URL(url);
    const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : parsed.protocol === 'http:' ? 80 : undefined;
    if (!parsed.hostname || port === undefined) return undefined;
    return { host: normaliseHost(parsed.hostname), port };
  } catch {
    return undefined;
  }
}

/** Lower-case, an IPv6 literal without its brackets: the form a CONNECT target and a URL's host are compared in. */
export function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

/** Whether `dest` is one of `allowed`. */
export function isAllowedDestination(allowed: readonly NetDestination[], dest: NetDestination): boolean {
  return allowed.some((entry) => entry.host === normaliseHost(dest.host) && entry.port === dest.port);
}

function dedupe(destinations: NetDestination[]): NetDestination[] {
  const seen = new Set<string>();
  return destinations.filter((dest) => {
    const key = `${dest.host} ${dest.port}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
