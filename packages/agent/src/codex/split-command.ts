/**
 * Splits CODEX_COMMAND into argv without a shell, so nothing in the setting is
 * ever interpreted as shell syntax (no globbing, no `$VAR`, no `;`). Handles
 * the quoting people write in an env file: 'single' (literal), "double"
 * (backslash escapes `"` and `\`) and a backslash outside quotes.
 * Returns null for an unterminated quote or an empty command.
 */
export function splitCommandLine(command: string): string[] | null {
  const args: string[] = [];
  let current = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let index = 0; index < command.length; index++) {
    const char = command[index] as string;
    if (quote === "'") {
      if (char === "'") quote = null;
      else current += char;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = null;
      else if (char === '\\' && (command[index + 1] === '"' || command[index + 1] === '\\')) current += command[++index];
      else current += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && index + 1 < command.length) {
      current += command[++index];
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) args.push(current);
      current = '';
      inWord = false;
    } else {
      current += char;
      inWord = true;
    }
  }
  if (quote) return null;
  if (inWord) args.push(current);
  return args.length > 0 ? args : null;
}
