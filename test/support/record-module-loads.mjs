// Loaded with `node --import` into a process under test: appends the URL of
// every ES module the process loads (the bundle's chunks, packages imported
// from node_modules) to RECORD_LOADS_TO, one a line, through a module hook.
// Plain JavaScript, because the production build runs without tsx. A test
// reads the lines to tell which code a process has loaded at all.
import { register } from 'node:module';

const target = process.env.RECORD_LOADS_TO;
if (target) register('./record-module-loads-hook.mjs', import.meta.url, { data: { target } });
