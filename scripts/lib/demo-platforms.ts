/**
 * The demo's three ways in: each platform's env for the processes, and how
 * the person's typed line reaches the gateway (through the simulator, exactly
 * as the platform would send it) and how the bot's answers come back.
 */
export type DemoPlatform = 'telegram' | 'slack' | 'discord';

export interface DemoChat {
  /** Env for gateway and worker. */
  env(simUrl: string): Promise<Record<string, string>>;
  /** Env for the simulator itself. */
  simEnv: Record<string, string>;
  /** After the gateway listens: point the simulated platform at it. */
  connect(simUrl: string, gatewayUrl: string): Promise<void>;
  send(simUrl: string, text: string): Promise<void>;
  /** Every message the bot has sent in this chat, oldest first, once there are at least `count`. */
  waitForReplies(simUrl: string, count: number): Promise<string[]>;
}

const telegramToken = '123456:demo-token';
const telegramSecret = 'demo-secret';
const slackSecret = 'demo-slack-signing-secret';
const slackToken = 'xoxb-demo-token';
const discordToken = 'demo-discord-token';
const discordApplicationId = '1300000000000000042';

export const demoChats: Record<DemoPlatform, DemoChat> = {
  telegram: {
    simEnv: { TELEGRAM_BOT_TOKEN: telegramToken, TELEGRAM_WEBHOOK_SECRET: telegramSecret },
    env: async (simUrl) => ({ TELEGRAM_BOT_TOKEN: telegramToken, TELEGRAM_WEBHOOK_SECRET: telegramSecret, TELEGRAM_API_ROOT: simUrl }),
    connect: async (simUrl, gatewayUrl) => {
      await postJson(`${simUrl}/bot${telegramToken}/setWebhook`, { url: `${gatewayUrl}/webhooks/telegram`, secret_token: telegramSecret });
    },
    send: async (simUrl, text) => {
      await postJson(`${simUrl}/control/telegram/updates`, { chat: { id: 1001, type: 'private' }, from: { id: 1001, first_name: 'Demo' }, text });
    },
    waitForReplies: async (simUrl, count) => (await waitJson<{ text: string }[]>(`${simUrl}/control/telegram/wait?chat_id=1001&count=${count}&timeout_ms=30000`)).map((m) => m.text),
  },
  slack: {
    simEnv: { SLACK_SIGNING_SECRET: slackSecret, SLACK_BOT_TOKEN: slackToken },
    env: async (simUrl) => ({ SLACK_SIGNING_SECRET: slackSecret, SLACK_BOT_TOKEN: slackToken, SLACK_API_URL: `${simUrl}/api/` }),
    connect: async (simUrl, gatewayUrl) => {
      await postJson(`${simUrl}/control/slack/request-url`, { url: `${gatewayUrl}/webhooks/slack/events` });
    },
    send: async (simUrl, text) => {
      await postJson(`${simUrl}/control/slack/events`, { channel: 'D0DEMO', channel_type: 'im', user: 'U0DEMO', text });
    },
    waitForReplies: async (simUrl, count) => (await waitJson<{ text: string }[]>(`${simUrl}/control/slack/wait?channel=D0DEMO&count=${count}&timeout_ms=30000`)).map((m) => m.text),
  },
  discord: {
    simEnv: { DISCORD_BOT_TOKEN: discordToken, DISCORD_APPLICATION_ID: discordApplicationId },
    env: async (simUrl) => {
      const { public_key: publicKey } = await waitJson<{ public_key: string }>(`${simUrl}/control/discord/public-key`);
      return { DISCORD_BOT_TOKEN: discordToken, DISCORD_APPLICATION_ID: discordApplicationId, DISCORD_PUBLIC_KEY: publicKey, DISCORD_API_URL: `${simUrl}/api` };
    },
    connect: async (simUrl, gatewayUrl) => {
      await postJson(`${simUrl}/control/discord/config`, { interactions_url: `${gatewayUrl}/webhooks/discord/interactions` });
    },
    send: async (simUrl, text) => {
      await postJson(`${simUrl}/control/discord/messages`, { channel_id: '2200000000000000001', author: { id: '2100000000000000001', username: 'demo' }, content: text });
    },
    waitForReplies: async (simUrl, count) =>
      (await waitJson<{ content: string }[]>(`${simUrl}/control/discord/wait?channel_id=2200000000000000001&count=${count}&timeout_ms=30000`)).map((m) => m.content),
  },
};

export async function postJson(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${url.replace(/bot[^/]+/, 'bot<token>')} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

async function waitJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`no reply within 30 s (simulator answered ${response.status})`);
  return (await response.json()) as T;
}
