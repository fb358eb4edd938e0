// Run inside a Codex child's sandbox by test/e2e/codex-sandbox.e2e.test.ts (`sh: node net-probe.cjs name:host:port…`):
// for each target, whether a plain connection opens, and what the proxy named by HTTP_PROXY answers a request to it
// and a CONNECT to it. Plain JavaScript: the sandbox runs it with the worker's node, no loader.
import http from 'node:http';
import net from 'node:net';

const targets = process.argv.slice(2).map((arg) => {
  const [name, host, port] = arg.split(':');
  return { name, host, port: Number(port) };
});
const proxy = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : undefined;

function direct(target) {
  return new Promise((resolve) => {
    const socket = net.connect(target.port, target.host);
    const timer = setTimeout(() => (socket.destroy(), resolve('timeout')), 3000);
    socket.on('connect', () => (clearTimeout(timer), socket.destroy(), resolve('connected')));
    socket.on('error', (err) => (clearTimeout(timer), resolve(err.code)));
  });
}

function proxied(target) {
  if (!proxy) return Promise.resolve('none');
  return new Promise((resolve) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'GET', path: `http://${target.host}:${target.port}/probe` }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve(`${res.statusCode}:${body.trim().replace(/\s+/g, '_').slice(0, 24)}`));
    });
    req.on('error', (err) => resolve(err.code));
    req.end();
  });
}

function tunnel(target) {
  if (!proxy) return Promise.resolve('none');
  return new Promise((resolve) => {
    const req = http.request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: `${target.host}:${target.port}` });
    req.on('connect', (res, socket) => (socket.destroy(), resolve(String(res.statusCode))));
    req.on('error', (err) => resolve(err.code));
    req.end();
  });
}

for (const target of targets) console.log(`${target.name} direct=${await direct(target)} proxied=${await proxied(target)} tunnel=${await tunnel(target)}`);
