import { readJson } from '../http-json.ts';
import type { LoadTarget } from '../options.ts';
import { createDiscordDriver } from './discord-driver.ts';
import type { PlatformDriver, PlatformName } from './platform-driver.ts';
import { createSlackDriver } from './slack-driver.ts';
import { createTelegramDriver } from './telegram-driver.ts';

/** One driver per platform of the mix, all pointed at the target's simulators. */
export function createDrivers(target: LoadTarget, platforms: PlatformName[]): Map<PlatformName, PlatformDriver> {
  const inboundSimUrls = target.inboundSimUrls ?? [target.simUrl];
  const explicit = target.explicitUpdateIds ?? false;
  const drivers = new Map<PlatformName, PlatformDriver>();
  for (const platform of new Set(platforms)) {
    if (platform === 'telegram') drivers.set(platform, createTelegramDriver({ replySimUrl: target.simUrl, inboundSimUrls, explicitUpdateIds: explicit }));
    if (platform === 'slack') drivers.set(platform, createSlackDriver({ replySimUrl: target.simUrl, inboundSimUrls, explicitEventIds: explicit }));
    if (platform === 'discord') drivers.set(platform, createDiscordDriver({ simUrl: target.simUrl }));
  }
  return drivers;
}

/** Fails with what to configure when a simulator cannot deliver a platform's events to the gateway. */
export async function checkPlatformWiring(target: LoadTarget, platforms: PlatformName[]): Promise<void> {
  const inboundSimUrls = target.inboundSimUrls ?? [target.simUrl];
  for (const platform of new Set(platforms)) {
    if (platform === 'telegram') {
      for (const simUrl of inboundSimUrls) {
        const webhook = await readJson<{ url: string | null }>(`${simUrl}/control/telegram/webhook`);
        if (!webhook.url) throw new Error(`the simulator at ${simUrl} has no Telegram webhook: start it with SIM_TELEGRAM_WEBHOOK_URL=<gateway>/webhooks/telegram`);
      }
    }
    if (platform === 'slack') {
      for (const simUrl of inboundSimUrls) {
        const requestUrl = await readJson<{ url: string | null }>(`${simUrl}/control/slack/request-url`);
        if (!requestUrl.url) throw new Error(`the simulator at ${simUrl} has no Slack Request URL: start it with SIM_SLACK_EVENTS_URL=<gateway>/webhooks/slack/events and SLACK_SIGNING_SECRET`);
      }
    }
    if (platform === 'discord') {
      // The gateway opens its Discord connection at start; give it a moment, as a bot does after a deploy.
      const state = await readJson<{ connected: boolean }>(`${target.simUrl}/control/discord/gateway/wait?identifies=1&connected=true&timeout_ms=30000`, { acceptStatus: [408] });
      if (!('connected' in state) || !state.connected) {
        throw new Error(`no gateway holds a Discord Gateway connection to the simulator at ${target.simUrl}: give the gateway DISCORD_BOT_TOKEN and DISCORD_API_URL=<sim>/api`);
      }
    }
  }
}
