// The hook record-module-loads.mjs registers; it runs on Node's loader thread.
import { appendFileSync } from 'node:fs';

let target = '';

export function initialize(data) {
  target = data.target;
}

export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) appendFileSync(target, `${url}\n`);
  return nextLoad(url, context);
}
