import { z } from 'zod';

/**
 * The app-server's messages as we read them (openai/codex
 * `codex-rs/app-server-protocol`, docs/codex.md "The protocol as we speak it").
 * Every schema is lenient: unknown fields pass through and anything we do not
 * use is optional, so a newer Codex that adds fields never breaks a turn.
 */

export type RpcId = string | number;

export const rpcErrorSchema = z.object({ code: z.number(), message: z.string().catch('') }).passthrough();
export type RpcError = z.infer<typeof rpcErrorSchema>;

/** One line from the child. Codex omits `jsonrpc`; a peer that sends it is accepted too. */
export const envelopeSchema = z
  .object({
    jsonrpc: z.string().optional(),
    id: z.union([z.string(), z.number()]).nullish(),
    method: z.string().optional(),
    params: z.unknown().optional(),
    result: z.unknown().optional(),
    error: rpcErrorSchema.optional(),
  })
  .passthrough();
export type RpcEnvelope = z.infer<typeof envelopeSchema>;

/** JSON-RPC codes we send or read. */
export const rpcCodes = {
  methodNotFound: -32601,
  /** The app-server's ingress queue is full: retry with backoff. */
  serverOverloaded: -32001,
} as const;

const maybeString = z.string().nullish().catch(undefined);
const maybeNumber = z.number().nullish().catch(undefined);

export const turnSchema = z
  .object({
    id: z.string(),
    status: z.string().nullish().catch(undefined),
    error: z.object({ message: z.string().catch('') }).passthrough().nullish().catch(undefined),
  })
  .passthrough();

export const turnNotificationSchema = z.object({ threadId: maybeString, turn: turnSchema }).passthrough();
export const turnStartResultSchema = z.object({ turn: turnSchema }).passthrough();
export const threadResultSchema = z.object({ thread: z.object({ id: z.string() }).passthrough() }).passthrough();

/** A ThreadItem: only `type` and `id` are needed to track it; the projection reads the rest. */
export const itemSchema = z.object({ type: z.string(), id: z.string() }).passthrough();
export type CodexItem = z.infer<typeof itemSchema>;
export const itemNotificationSchema = z.object({ threadId: maybeString, turnId: maybeString, item: itemSchema }).passthrough();

/** `item/agentMessage/delta`: the next piece of an agent message's text. */
export const agentMessageDeltaSchema = z.object({ turnId: maybeString, itemId: z.string(), delta: z.string() }).passthrough();

export const agentMessageItemSchema = z.object({ text: z.string().catch('') }).passthrough();

export const commandItemSchema = z
  .object({
    command: z.union([z.string(), z.array(z.string())]).nullish().catch(undefined),
    cwd: maybeString,
    status: maybeString,
    aggregatedOutput: maybeString,
    exitCode: maybeNumber,
  })
  .passthrough();

export const fileChangeSchema = z.object({ path: z.string(), kind: z.unknown().optional(), diff: maybeString }).passthrough();
export const fileChangeItemSchema = z
  .object({ changes: z.array(fileChangeSchema).catch([]).default([]), status: maybeString })
  .passthrough();

/** `error` notification: `willRetry: true` means Codex is retrying by itself and the turn goes on. */
export const errorNotificationSchema = z
  .object({
    error: z.object({ message: z.string().catch(''), codexErrorInfo: z.unknown().optional() }).passthrough(),
    willRetry: z.boolean().nullish().catch(undefined),
  })
  .passthrough();

export const commandApprovalParamsSchema = z
  .object({
    itemId: maybeString,
    command: z.union([z.string(), z.array(z.string())]).nullish().catch(undefined),
    cwd: maybeString,
    reason: maybeString,
  })
  .passthrough();

export const fileChangeApprovalParamsSchema = z.object({ itemId: maybeString, reason: maybeString, grantRoot: maybeString }).passthrough();

export const legacyExecApprovalParamsSchema = z
  .object({ callId: maybeString, command: z.array(z.string()).nullish().catch(undefined), cwd: maybeString, reason: maybeString })
  .passthrough();

export const legacyPatchApprovalParamsSchema = z
  .object({
    callId: maybeString,
    fileChanges: z.record(z.unknown()).nullish().catch(undefined),
    reason: maybeString,
    grantRoot: maybeString,
  })
  .passthrough();

/** Parses leniently: the value, or undefined when it does not fit (never a throw). */
export function parseLeniently<T>(schema: z.ZodType<T, z.ZodTypeDef, unknown>, value: unknown): T | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
