import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. The kernel picks it, so
 * parallel test processes do not collide the way a fixed range would; another
 * process can still take it before the caller binds, which is why servers are
 * started on it straight away.
 */
export function getFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port the kernel assigned'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
