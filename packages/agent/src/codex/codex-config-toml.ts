/**
 * The few keys of the operator's Codex `config.toml` the worker needs: which
 * model provider a child uses, its key's variable (codex-child-env.ts) and
 * its address (codex-provider-hosts.ts). A small reader for these keys only,
 * not a TOML parser: quoted strings on `key = "value"` lines under `[table]`
 * headers. A full parser would be one more dependency for three strings.
 */

/** String values by table name ('' for the top), each table's dotted name unquoted. */
export function readTomlStrings(text: string): Map<string, Map<string, string>> {
  const tables = new Map<string, Map<string, string>>([['', new Map()]]);
  let current = tables.get('') as Map<string, string>;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = /^\[([^[\]]+)\]\s*(#.*)?$/.exec(line);
    if (header) {
      const name = (header[1] as string).split('.').map((part) => part.trim().replace(/^["']|["']$/g, '')).join('.');
      current = tables.get(name) ?? new Map<string, string>();
      tables.set(name, current);
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')\s*(#.*)?$/.exec(line);
    if (pair) current.set(pair[1] as string, pair[2] ?? pair[3] ?? '');
  }
  return tables;
}

/** The provider `model_provider` names, in the `[profiles.<name>]` that `profile` selects or at the top; Codex's default `openai` else. */
export function readModelProvider(tables: Map<string, Map<string, string>>): string {
  const top = tables.get('') ?? new Map<string, string>();
  const profile = top.get('profile');
  return (profile ? tables.get(`profiles.${profile}`)?.get('model_provider') : undefined) ?? top.get('model_provider') ?? 'openai';
}
