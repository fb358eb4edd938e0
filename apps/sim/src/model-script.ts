import { z } from 'zod';
import { SimError, describeZodError } from './errors.ts';

const defaultReplySchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('echo'), prefix: z.string().optional() }).strict(),
  z.object({ type: z.literal('fixed'), text: z.string() }).strict(),
  z.object({ type: z.literal('lookup'), replies: z.record(z.string()), fallback: z.string().optional() }).strict(),
]);

const ruleSchema = z
  .object({
    match: z.string().optional(),
    matchRegex: z
      .string()
      .refine(isValidRegex, 'must be a valid JavaScript regular expression')
      .optional(),
    /** `{{tool_result}}` in it stands for the last tool message's content (a rule answering after a tool call). */
    reply: z.string().optional(),
    replyRepeat: z.object({ text: z.string().min(1), count: z.number().int().min(1).max(1_000_000) }).strict().optional(),
    toolCalls: z
      .array(z.object({ name: z.string().min(1), arguments: z.record(z.unknown()).default({}) }).strict())
      .min(1)
      .optional(),
    error: z
      .object({
        status: z.number().int().min(400).max(599),
        message: z.string().optional(),
        type: z.string().optional(),
        code: z.string().nullable().optional(),
        /** Sent as `Retry-After` (whole seconds, as HTTP defines it), which rate-limited APIs set on a 429 or 503. */
        retryAfter: z.number().int().nonnegative().optional(),
        /** Sent as `retry-after-ms`, the finer header OpenAI-compatible APIs add and the OpenAI SDK reads first. */
        retryAfterMs: z.number().nonnegative().optional(),
      })
      .strict()
      .optional(),
    delayMs: z.number().int().nonnegative().optional(),
    chunkDelayMs: z.number().int().nonnegative().optional(),
    hang: z.boolean().optional(),
    times: z.number().int().nonnegative().optional(),
    /**
     * Fits only a turn's first request, not the follow-ups that carry tool
     * results after the last user message; with it a tool rule can answer
     * every turn for that text (`times` then defaults to unlimited) without
     * answering its own tool results forever.
     */
    firstStep: z.boolean().optional(),
  })
  .strict();

export const modelScriptSchema = z
  .object({
    default: defaultReplySchema.default({ type: 'echo' }),
    rules: z.array(ruleSchema).default([]),
    delayMs: z.number().int().nonnegative().default(0),
    chunkDelayMs: z.number().int().nonnegative().default(0),
    chunkSize: z.number().int().positive().default(16),
  })
  .strict();

export type ModelScript = z.output<typeof modelScriptSchema>;
export type ModelRule = z.output<typeof ruleSchema>;

export interface ToolCallPlan {
  id: string;
  name: string;
  arguments: string;
}

/** What to answer one request with, decided the moment it arrives. */
export interface ReplyPlan {
  ruleIndex?: number;
  kind: 'reply' | 'error' | 'hang';
  content: string;
  toolCalls: ToolCallPlan[];
  error?: { status: number; message: string; type: string; code: string | null; headers: Record<string, string> };
  delayMs: number;
  chunkDelayMs: number;
  chunkSize: number;
}

interface CompiledRule {
  rule: ModelRule;
  regex?: RegExp;
  remaining: number;
}

const noScriptedReply = '(no scripted reply)';

/**
 * The scripted model. A script is replaced whole; rules are tried in order and
 * the first that fits and has uses left answers. `lookup` replies live in a
 * Map because the load tester replays whole transcripts through it.
 */
export class ModelScriptRunner {
  private script: ModelScript = modelScriptSchema.parse({});
  private rules: CompiledRule[] = [];
  private lookup = new Map<string, string>();
  private toolCallCounter = 0;

  /** Validates and installs `input`; throws a SimError (400) naming every bad field. */
  replace(input: unknown): ModelScript {
    const result = modelScriptSchema.safeParse(input ?? {});
    if (!result.success) throw new SimError('SIM_BAD_SCRIPT', describeZodError(result.error));
    this.install(result.data);
    return this.script;
  }

  reset(): void {
    this.install(modelScriptSchema.parse({}));
  }

  current(): ModelScript {
    return this.script;
  }

  /** Uses left per rule (null = unlimited), for debugging a script that stopped matching. */
  remaining(): Array<number | null> {
    return this.rules.map((compiled) => (Number.isFinite(compiled.remaining) ? compiled.remaining : null));
  }

  /** Picks the rule (consuming one use) and the reply for a request's messages. */
  plan(messages: unknown[]): ReplyPlan {
    const lastUserText = findLastUserText(messages);
    const firstStep = !hasToolResultAfterLastUser(messages);
    const base = { delayMs: this.script.delayMs, chunkDelayMs: this.script.chunkDelayMs, chunkSize: this.script.chunkSize };
    const ruleIndex = this.rules.findIndex((compiled) => compiled.remaining > 0 && fits(compiled, lastUserText) && (!compiled.rule.firstStep || firstStep));
    const compiled = this.rules[ruleIndex];
    if (!compiled) return { ...base, kind: 'reply', content: this.defaultReply(lastUserText), toolCalls: [] };

    compiled.remaining -= 1;
    const { rule } = compiled;
    const timing = { delayMs: rule.delayMs ?? base.delayMs, chunkDelayMs: rule.chunkDelayMs ?? base.chunkDelayMs, chunkSize: base.chunkSize };
    if (rule.hang) return { ...timing, ruleIndex, kind: 'hang', content: '', toolCalls: [] };
    if (rule.error) {
      const { status, message, type, code, retryAfter, retryAfterMs } = rule.error;
      const headers: Record<string, string> = {
        ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
        ...(retryAfterMs !== undefined ? { 'retry-after-ms': String(retryAfterMs) } : {}),
      };
      const error = { status, message: message ?? `Scripted error ${status}`, type: type ?? errorTypeFor(status), code: code ?? null, headers };
      return { ...timing, ruleIndex, kind: 'error', content: '', toolCalls: [], error };
    }
    const toolCalls = (rule.toolCalls ?? []).map((call) => ({ id: this.nextToolCallId(), name: call.name, arguments: JSON.stringify(call.arguments) }));
    const content =
      rule.replyRepeat !== undefined
        ? rule.replyRepeat.text.repeat(rule.replyRepeat.count)
        : rule.reply !== undefined
          ? fillReply(rule.reply, messages)
          : toolCalls.length > 0
            ? ''
            : this.defaultReply(lastUserText);
    return { ...timing, ruleIndex, kind: 'reply', content, toolCalls };
  }

  private install(script: ModelScript): void {
    this.script = script;
    this.rules = script.rules.map((rule) => ({
      rule,
      ...(rule.matchRegex !== undefined ? { regex: new RegExp(rule.matchRegex) } : {}),
      // A tool-calling rule that answered forever would loop the agent forever.
      remaining: rule.times ?? (rule.toolCalls && !rule.firstStep ? 1 : Number.POSITIVE_INFINITY),
    }));
    this.lookup = script.default.type === 'lookup' ? new Map(Object.entries(script.default.replies)) : new Map();
  }

  private defaultReply(lastUserText: string): string {
    const fallback = this.script.default;
    if (fallback.type === 'echo') return `${fallback.prefix ?? 'echo: '}${lastUserText}`;
    if (fallback.type === 'fixed') return fallback.text;
    return this.lookup.get(lastUserText) ?? this.lookup.get(lastUserText.trim()) ?? fallback.fallback ?? noScriptedReply;
  }

  private nextToolCallId(): string {
    this.toolCallCounter += 1;
    return `call_sim${this.toolCallCounter.toString(36).padStart(6, '0')}${Math.random().toString(36).slice(2, 10)}`;
  }
}

function fits(compiled: CompiledRule, lastUserText: string): boolean {
  if (compiled.rule.match !== undefined && !lastUserText.includes(compiled.rule.match)) return false;
  if (compiled.regex && !compiled.regex.test(lastUserText)) return false;
  return true;
}

const toolResultPlaceholder = '{{tool_result}}';

function fillReply(reply: string, messages: unknown[]): string {
  if (!reply.includes(toolResultPlaceholder)) return reply;
  const lastTool = messages.findLast((message) => (message as { role?: unknown } | null)?.role === 'tool') as { content?: unknown } | undefined;
  return reply.replaceAll(toolResultPlaceholder, contentText(lastTool?.content));
}

/** The text of the last `user` message; content may be a string or an array of parts. */
export function findLastUserText(messages: unknown[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index] as { role?: unknown; content?: unknown } | null;
    if (message?.role === 'user') return contentText(message.content);
  }
  return '';
}

function hasToolResultAfterLastUser(messages: unknown[]): boolean {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const role = (messages[index] as { role?: unknown } | null)?.role;
    if (role === 'user') return false;
    if (role === 'tool') return true;
  }
  return false;
}

export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown } | null) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function isValidRegex(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
