import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './load-config.ts';

/** An MCP server the worker starts as a child process and speaks to over its stdin and stdout. */
export interface McpStdioServerEntry {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  /** Given to the child on top of its allow-list (docs/tools.md, "MCP tool servers"); never the worker's own environment. */
  env: Record<string, string>;
  enabledByDefault: boolean;
}

/** An MCP server reached over Streamable HTTP. */
export interface McpHttpServerEntry {
  kind: 'http';
  name: string;
  url: string;
  /** Sent with every request (an Authorization header, say); never logged. */
  headers: Record<string, string>;
  enabledByDefault: boolean;
}

export type McpServerEntry = McpStdioServerEntry | McpHttpServerEntry;

/**
 * A server's name becomes the first half of `<server>__<tool>` (DESIGN §3),
 * a function name the OpenAI API accepts (letters, digits, `_`, `-`); a `__`
 * inside it would make the split ambiguous.
 */
const serverName = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
const stringMap = z.record(z.string(), z.string());

const entrySchema = z
  .object({
    command: z.string().trim().min(1, 'must not be empty').optional(),
    args: z.array(z.string()).optional(),
    env: stringMap.optional(),
    url: z.string().url('must be a URL').refine((url) => /^https?:\/\//i.test(url), 'must be an http or https URL').optional(),
    headers: stringMap.optional(),
    enabledByDefault: z.boolean().optional(),
  })
  .strict();

const fileSchema = z.object({ mcpServers: z.record(z.string(), z.unknown()) }).strict();

/**
 * The servers of an MCP_SERVERS file, in the common `{"mcpServers": {…}}`
 * shape. Every problem is found before anything starts: a ConfigError whose
 * message has one line per bad entry, naming it.
 */
export function parseMcpServers(text: string, source = 'MCP_SERVERS'): McpServerEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${source} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const file = fileSchema.safeParse(json);
  if (!file.success) throw new ConfigError(`Invalid configuration: ${source} must be an object {"mcpServers": {"<name>": {…}}} (${describeIssues(file.error)})`);
  const entries: McpServerEntry[] = [];
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(file.data.mcpServers)) {
    const parsed = parseEntry(name, raw);
    if (typeof parsed === 'string') problems.push(`${source}: server "${name}" ${parsed}`);
    else entries.push(parsed);
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  return entries;
}

/** Reads and parses the file MCP_SERVERS names; a missing or unreadable file is a ConfigError too. */
export function readMcpServersFile(path: string): McpServerEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(`Invalid configuration: MCP_SERVERS names ${JSON.stringify(path)}, which cannot be read (${typeof code === 'string' ? code : 'unreadable'})`);
  }
  return parseMcpServers(text, `MCP_SERVERS (${path})`);
}

/** The entry, or what is wrong with it in words that follow its name. */
function parseEntry(name: string, raw: unknown): McpServerEntry | string {
  if (name.length > 32 || !serverName.test(name)) return 'has a name that is not 1-32 letters, digits, "-" or single "_"';
  const result = entrySchema.safeParse(raw);
  if (!result.success) return describeIssues(result.error);
  const { command, args, env, url, headers, enabledByDefault = false } = result.data;
  if (command !== undefined && url !== undefined) return 'has both "command" and "url"; give one';
  if (command !== undefined) {
    if (headers !== undefined) return 'has "headers", which only a "url" server takes';
    return { kind: 'stdio', name, command, args: args ?? [], env: env ?? {}, enabledByDefault };
  }
  if (url !== undefined) {
    if (args !== undefined || env !== undefined) return 'has "args" or "env", which only a "command" server takes';
    return { kind: 'http', name, url, headers: headers ?? {}, enabledByDefault };
  }
  return 'has neither "command" (stdio) nor "url" (Streamable HTTP)';
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === z.ZodIssueCode.unrecognized_keys) return `has unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      const at = issue.path.length > 0 ? `"${issue.path.join('.')}" ` : '';
      return `${at}${issue.message}`.trim();
    })
    .join('; ');
}
