#!/usr/bin/env node
// The fake Codex app-server as a command (CODEX_COMMAND), runnable from any
// directory: tsx's loader is registered in this process and the TypeScript
// source imported, so no second process sits between the client and the fake
// (a signal sent to this pid reaches the fake itself). apps/sim/README.md.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/codex/fake-codex-main.ts', import.meta.url).href);
