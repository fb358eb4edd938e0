/**
 * The bridge inside a Codex child's sandbox under
 * `CODEX_SANDBOX_NETWORK=provider` (docs/codex.md, "The child's network").
 * The sandbox has a network namespace of its own with loopback only, so the
 * child reaches nothing of the machine: not Postgres, Redis, the gateway nor
 * a metadata address. The one way out is the worker's proxy, a Unix socket
 * bound into the sandbox (codex-net-proxy.ts). Codex and the commands it
 * runs speak HTTP(S) through a proxy named by HTTP_PROXY/HTTPS_PROXY, which
 * must be a TCP address, so this bridge listens on the sandbox's own
 * 127.0.0.1 and carries each connection to the socket, then runs the child
 * with those variables set to itself. Plain bytes in both directions: what
 * may pass is decided outside, by the proxy, where the child cannot reach.
 *
 * Run as `node -e bridgeScript -- <socket> <program> <args…>` (CommonJS: `-e`
 * is a script, and no file of ours need be shown inside the sandbox). The
 * child gets the bridge's stdio as its own (the app-server's JSON-RPC goes
 * straight through) and the bridge exits with the child's status.
 */
export const bridgeScript = `
'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
process.title = 'codex-net-bridge';
const [socketPath, program, ...args] = process.argv.slice(1);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on('error', end);
  upstream.on('error', end);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (err) => {
  process.stderr.write('codex-net-bridge: ' + err.message + '\\n');
  process.exit(70);
});
server.listen(0, '127.0.0.1', () => {
  const url = 'http://127.0.0.1:' + server.address().port;
  const env = Object.assign({}, process.env);
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) { env[name] = url; env[name.toLowerCase()] = url; }
  // Nothing bypasses the proxy: a loopback provider is the worker's loopback, reached through it.
  delete env.NO_PROXY;
  delete env.no_proxy;
  const child = spawn(program, args, { stdio: 'inherit', env });
  child.on('error', (err) => {
    process.stderr.write('codex-net-bridge: ' + err.message + '\\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(signal ? 128 + (constants.signals[signal] || 0) : code));
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(name, () => child.kill(name));
});
`;

/** Where the worker's proxy socket is bound inside every sandbox. */
export const proxySocketInside = '/run/switchboard/codex-net.sock';

/** The child's command line under the bridge: `node` is the worker's own (shown in the sandbox). */
export function bridgeArgv(node: string, command: readonly string[]): string[] {
  return [node, '-e', bridgeScript, '--', proxySocketInside, ...command];
}
