import { DiscordAPIError, REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';

// GET /gateway/bot over @discordjs/rest: the gateway connection's only use of
// the SDK, in a module of its own so that gateway-connection.ts loads it on
// first use (load-on-first-use.ts says why).

export interface GatewayBotInfo {
  url: string;
  session_start_limit?: { remaining: number; reset_after: number };
}

export interface GatewayBotReader {
  /** `unauthorized`: Discord refused the token (401); anything else that fails throws. */
  read(signal: AbortSignal): Promise<{ kind: 'ok'; info: GatewayBotInfo } | { kind: 'unauthorized' }>;
}

export function createGatewayBotReader(options: { apiUrl: string; token: string }): GatewayBotReader {
  const rest = new REST({ api: options.apiUrl.replace(/\/+$/, ''), version: '10', retries: 1, timeout: 10_000 }).setToken(options.token);
  return {
    async read(signal) {
      try {
        return { kind: 'ok', info: (await rest.get(Routes.gatewayBot(), { signal })) as GatewayBotInfo };
      } catch (error) {
        if (error instanceof DiscordAPIError && error.status === 401) return { kind: 'unauthorized' };
        throw error;
      }
    },
  };
}
