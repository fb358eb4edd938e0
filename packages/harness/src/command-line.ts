import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * The command line of a script with a usage text: `--help` prints it and
 * exits 0; an unknown or malformed option prints the error and it, and exits 2.
 */
export function readCommandLine<const O extends Options>(options: O, usage: string): ReturnType<typeof parseArgs<{ options: O }>>['values'] {
  let values: ReturnType<typeof parseArgs<{ options: O }>>['values'];
  try {
    values = parseArgs({ options }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  if ((values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values;
}
