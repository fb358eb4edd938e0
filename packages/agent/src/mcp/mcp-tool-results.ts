/**
 * The pure half of MCP tools (docs/tools.md, "MCP tool servers"): names as
 * the model sees them, which tools are offered, and a call's result as the
 * text the model reads.
 */

/** Between a server's name and its tool's in the name the model calls (DESIGN §3). */
export const mcpNameSeparator = '__';

/** OpenAI-compatible APIs refuse a function name outside `^[a-zA-Z0-9_-]{1,64}$`. */
const functionName = /^[A-Za-z0-9_-]{1,64}$/;

/** `<server>__<tool>`, or null when the result is not a function name the model API accepts (the tool is then left out). */
export function mcpToolName(server: string, tool: string): string | null {
  const name = `${server}${mcpNameSeparator}${tool}`;
  return functionName.test(name) ? name : null;
}

/** The part of a tool's annotations this decides on (MCP spec: every hint is advisory and defaults to the unsafe side). */
export interface McpToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * Fail closed on side effects: a tool runs without asking only when its
 * server says it is read-only and does not say it is destructive.
 */
export function isOfferedMcpTool(annotations: McpToolHints | undefined): boolean {
  return annotations?.readOnlyHint === true && annotations.destructiveHint !== true;
}

/** Whether calling the tool asks the chat first (docs/tools.md, "Approvals for tools"): every tool not plainly read-only. */
export function mcpToolAsks(annotations: McpToolHints | undefined): boolean {
  return !isOfferedMcpTool(annotations);
}

/** The parts of an MCP CallToolResult read here; other content kinds are named, not shown. */
export interface McpCallResult {
  content?: readonly McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
}

type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; mimeType?: string; data?: string }
  | { type: 'resource'; resource: { uri?: string; text?: string; mimeType?: string } }
  | { type: 'resource_link'; uri?: string; name?: string }
  | { type: string };

/** The result as text: text parts as they are, other parts as a bracketed line, an error marked as one. */
export function renderMcpResult(result: McpCallResult): string {
  const parts = (result.content ?? []).map(renderContent);
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  return result.isError ? `error: ${text || 'the tool reported an error'}` : text;
}

function renderContent(part: McpContent): string {
  if (part.type === 'text' && 'text' in part) return part.text;
  if ((part.type === 'image' || part.type === 'audio') && 'data' in part) {
    return `[${part.type}: ${part.mimeType ?? 'unknown type'}, ${Math.floor(((part.data ?? '').length * 3) / 4)} bytes, not shown]`;
  }
  if (part.type === 'resource' && 'resource' in part) return part.resource.text ?? `[resource: ${part.resource.uri ?? 'no uri'}, not shown]`;
  if (part.type === 'resource_link' && 'uri' in part) return `[resource link: ${part.uri ?? ''}]`;
  return `[${part.type} content, not shown]`;
}

/**
 * Cuts a result past `maxChars`, with a note the model reads: a tool the
 * model reaches must be bounded in output like the user's own documents
 * (MEDIA_DOCUMENT_MAX_CHARS), or one call could fill the context.
 */
export function cutToolResult(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // Never split a surrogate pair: a lone half is a character Postgres refuses.
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}\n[cut: the tool returned ${text.length} characters; only the first ${end} are shown]`;
}
