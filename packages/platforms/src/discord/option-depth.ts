import { PlatformError } from '../errors.ts';

/**
 * Discord nests a command's options at most three levels deep: a subcommand
 * group holds subcommands, a subcommand holds plain options. The option
 * schema is recursive, so a signed body with thousands of nested levels
 * would overflow the stack while validating (a 500); it is refused first.
 */
export const maxOptionDepth = 3;

/**
 * Throws PlatformError INVALID_PAYLOAD when `data.options` nests deeper than
 * Discord allows. Walks with an explicit stack and stops at the first level
 * too deep, so the check itself can neither overflow nor take long.
 */
export function assertOptionDepth(body: unknown): void {
  const data = isRecord(body) ? body.data : undefined;
  const stack: Array<{ options: unknown; depth: number }> = [{ options: isRecord(data) ? data.options : undefined, depth: 1 }];
  while (stack.length > 0) {
    const { options, depth } = stack.pop() as { options: unknown; depth: number };
    if (!Array.isArray(options)) continue;
    if (depth > maxOptionDepth) {
      throw new PlatformError('INVALID_PAYLOAD', `not a Discord interaction: data.options nest deeper than ${maxOptionDepth} levels`);
    }
    for (const option of options) if (isRecord(option)) stack.push({ options: option.options, depth: depth + 1 });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
