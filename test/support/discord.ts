export const discordBotToken = 'discord-test-token';
export const discordApplicationId = '1300000000000000001';
/** The simulated Gateway's heartbeat interval: short, so a zombie connection is noticed in well under a second. */
export const discordHeartbeatMs = 300;

/** createSim options that describe the Discord application the tests talk to. */
export const discordSimOptions = { discordBotToken, discordApplicationId, discordHeartbeatIntervalMs: discordHeartbeatMs };

/** The env that turns Discord on in the gateway and worker, pointed at the simulator (REST at `<sim>/api`, which hands out its Gateway URL). */
export function discordEnv(simUrl: string, publicKey: string): Record<string, string> {
  return { DISCORD_BOT_TOKEN: discordBotToken, DISCORD_APPLICATION_ID: discordApplicationId, DISCORD_PUBLIC_KEY: publicKey, DISCORD_API_URL: `${simUrl}/api` };
}

export interface DiscordMessageInput {
  channelId: string;
  content: string;
  /** Set for a guild channel; absent = a DM. */
  guildId?: string;
  authorId?: string;
  authorBot?: boolean;
  mentionsBot?: boolean;
  /** Reuse a message id (Discord sending the same message again). */
  id?: string;
  channelType?: number;
  /** The author's guild roles. */
  memberRoles?: string[];
  /** Files by their sim id (POST /control/media/files), as attachments. */
  attachments?: string[];
  /** A voice message: its one attachment is the recording. */
  voice?: boolean;
}

export interface DiscordDispatchResult {
  messageId: string;
  /** The sequence number of the MESSAGE_CREATE, null while no session exists. */
  s: number | null;
  delivered: boolean;
}

export interface SentDiscordMessage {
  id: string;
  channel_id: string;
  content: string;
  nonce?: string | number;
  message_reference?: { message_id?: string };
  followup?: boolean;
  original?: boolean;
  interaction_id?: string;
  edits?: number;
}

export interface DiscordInteractionResult {
  status: number;
  body: unknown;
  interaction: { id: string; token: string };
}

export interface DiscordGatewayState {
  connected: boolean;
  identifies: number;
  resumes: number;
  connections: number;
  acks_stopped: boolean;
  session_id: string | null;
  seq: number | null;
  last_close_code: number | null;
}

/** A Discord user's message, dispatched by the simulated Gateway as MESSAGE_CREATE. */
export async function sendDiscordMessage(simUrl: string, input: DiscordMessageInput): Promise<DiscordDispatchResult> {
  const body = (await post(`${simUrl}/control/discord/messages`, {
    channel_id: input.channelId,
    content: input.content,
    author: { id: input.authorId ?? '4000000000000000042', username: 'tester', ...(input.authorBot !== undefined ? { bot: input.authorBot } : {}) },
    ...(input.guildId ? { guild_id: input.guildId } : {}),
    ...(input.mentionsBot ? { mentions_bot: true } : {}),
    ...(input.id ? { id: input.id } : {}),
    ...(input.channelType !== undefined ? { channel_type: input.channelType } : {}),
    ...(input.memberRoles ? { member_roles: input.memberRoles } : {}),
    ...(input.attachments ? { attachments: input.attachments } : {}),
    ...(input.voice ? { voice: true } : {}),
  })) as { message: { id: string }; s: number | null; delivered: boolean };
  return { messageId: body.message.id, s: body.s, delivered: body.delivered };
}

/** Waits until the bot has made `count` messages in `channelId` in all, and returns them in order. */
export async function waitForDiscordMessages(simUrl: string, channelId: string, count: number, timeoutMs = 20_000): Promise<SentDiscordMessage[]> {
  const response = await fetch(`${simUrl}/control/discord/wait?channel_id=${channelId}&count=${count}&timeout_ms=${timeoutMs}`);
  const body = (await response.json()) as SentDiscordMessage[] | { sent: SentDiscordMessage[] };
  if (!response.ok) {
    const sent = Array.isArray(body) ? body : body.sent;
    throw new Error(`expected ${count} Discord messages in ${channelId}, got ${sent.length}: ${JSON.stringify(sent.map((m) => m.content.slice(0, 80)))}`);
  }
  return body as SentDiscordMessage[];
}

export async function discordSent(simUrl: string, channelId: string): Promise<SentDiscordMessage[]> {
  return (await (await fetch(`${simUrl}/control/discord/sent?channel_id=${channelId}`)).json()) as SentDiscordMessage[];
}

/** Drives the simulated Gateway: stop-acks, resume-acks, reconnect, invalid-session, drop {replay_from}, close {code}. */
export async function discordGatewayAction(simUrl: string, command: Record<string, unknown>): Promise<DiscordGatewayState> {
  return ((await post(`${simUrl}/control/discord/gateway`, command)) as { state: DiscordGatewayState }).state;
}

/** Waits until the simulated Gateway's counters reach the given figures (and `connected` matches, when given). */
export async function waitForDiscordGateway(
  simUrl: string,
  until: { identifies?: number; resumes?: number; connections?: number; connected?: boolean },
  timeoutMs = 15_000,
): Promise<DiscordGatewayState> {
  const query = new URLSearchParams({ timeout_ms: String(timeoutMs) });
  for (const [name, value] of Object.entries(until)) if (value !== undefined) query.set(name, String(value));
  const response = await fetch(`${simUrl}/control/discord/gateway/wait?${query.toString()}`);
  const body = (await response.json()) as DiscordGatewayState | { state: DiscordGatewayState };
  if (!response.ok) throw new Error(`Discord gateway never reached ${JSON.stringify(until)}: ${JSON.stringify((body as { state: unknown }).state)}`);
  return body as DiscordGatewayState;
}

/** A slash command (or PING) signed by the simulated Discord and POSTed to the gateway's Interactions Endpoint. */
export async function sendDiscordInteraction(
  simUrl: string,
  input: { name?: string; options?: { name: string; value: string }[]; channelId: string; guildId?: string; groupDm?: boolean; userId?: string; signing?: 'valid' | 'bad' | 'none'; ping?: boolean },
): Promise<DiscordInteractionResult> {
  return (await post(`${simUrl}/control/discord/interactions`, {
    ...(input.name ? { name: input.name } : {}),
    ...(input.options ? { options: input.options } : {}),
    channel_id: input.channelId,
    ...(input.guildId ? { guild_id: input.guildId } : {}),
    ...(input.groupDm ? { group_dm: true } : {}),
    user: { id: input.userId ?? '4000000000000000042', username: 'tester' },
    ...(input.signing ? { signing: input.signing } : {}),
    ...(input.ping ? { ping: true } : {}),
  })) as DiscordInteractionResult;
}

/** Arms a fault on a simulated Discord REST route. */
export async function armDiscordFault(simUrl: string, fault: { route: string; kind: string; times?: number; retryAfter?: number; delayMs?: number }): Promise<void> {
  await post(`${simUrl}/control/discord/faults`, fault);
}

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : undefined;
}
