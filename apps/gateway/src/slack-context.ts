import type { GatewayConfig } from '@switchboard/config';
import type { Logger } from '@switchboard/logger';
import { createSlackClient, fetchSlackAuthInfo, type SlackParseContext } from '@switchboard/platforms';

/**
 * Who the bot is, so its own messages are never input. `auth.test` is asked
 * once at start; if Slack is unreachable the gateway still starts, and the
 * bot's own posts are still dropped by their bot_id and by the envelope's
 * authorizations.
 */
export async function resolveSlackContext(config: GatewayConfig, log: Logger): Promise<SlackParseContext> {
  if (!config.SLACK_BOT_TOKEN) {
    log.warn('SLACK_BOT_TOKEN is not set; the gateway recognises its own Slack messages only by bot_id and authorizations');
    return {};
  }
  try {
    const client = await createSlackClient({ token: config.SLACK_BOT_TOKEN, apiUrl: config.SLACK_API_URL, timeoutMs: 3000 });
    const me = await fetchSlackAuthInfo(client);
    log.info({ teamId: me.teamId, botUserId: me.userId }, 'slack identity resolved');
    return { botUserId: me.userId, ...(me.botId ? { botId: me.botId } : {}) };
  } catch (err) {
    log.warn({ err }, 'slack auth.test failed; own messages are recognised by bot_id and authorizations until restart');
    return {};
  }
}
