import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { resolveConversationKey, type ConversationAddress } from '@switchboard/core';

/** Writes a HOOKS_FILE (DESIGN §3) to a temporary directory and returns its path. */
export function writeHooksFile(hooks: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'switchboard-hooks-')), 'hooks.json');
  writeFileSync(path, JSON.stringify(hooks));
  return path;
}

/**
 * A conversation as ingress would have created it (same key), before any
 * gateway starts: HOOKS_FILE names conversations by id and is read at start.
 */
export async function createConversation(databaseUrl: string, address: ConversationAddress, status: 'active' | 'suspended' = 'active'): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<{ id: string }[]>`
      insert into conversations (key, platform, account_id, chat_id, thread_id, user_scope, status)
      values (${resolveConversationKey(address)}, ${address.platform}, ${address.accountId}, ${address.chatId}, ${address.threadId}, ${address.userScope}, ${status})
      returning id`;
    return Number(row?.id);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Calls `POST /hooks/{name}` as an outside system would: the raw body signed with the hook's secret, under a delivery id. */
export async function callHook(gatewayUrl: string, call: { name: string; secret: string; body: string; deliveryId?: string; signature?: string; contentType?: string }): Promise<{ status: number; body: Record<string, unknown> }> {
  const signature = call.signature ?? `sha256=${createHmac('sha256', call.secret).update(call.body).digest('hex')}`;
  const response = await fetch(`${gatewayUrl}/hooks/${encodeURIComponent(call.name)}`, {
    method: 'POST',
    headers: {
      'content-type': call.contentType ?? 'application/json',
      'x-switchboard-signature': signature,
      ...(call.deliveryId !== undefined ? { 'x-switchboard-delivery': call.deliveryId } : {}),
    },
    body: call.body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
