// Loaded with `node --import` into a process under test: appends one line to
// COUNT_READS_TO each time the process reads a file whose path ends with
// COUNT_READS_OF through fs.readFileSync. Plain JavaScript, because the
// production build runs without tsx. A test reads the lines as a count: which
// data a process has loaded, not how long it took.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const suffix = process.env.COUNT_READS_OF;
const target = process.env.COUNT_READS_TO;
if (suffix && target) {
  const readFileSync = fs.readFileSync;
  fs.readFileSync = function countedReadFileSync(path, ...rest) {
    if (String(path).endsWith(suffix)) fs.appendFileSync(target, `${String(path)}\n`);
    return readFileSync.call(this, path, ...rest);
  };
  // So that `import { readFileSync } from 'node:fs'` in the bundle sees the wrapper too.
  syncBuiltinESMExports();
}
