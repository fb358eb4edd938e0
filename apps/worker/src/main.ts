import closeWithGrace from 'close-with-grace';
import { ConfigError, loadConfigOrExit, readMcpServersFile, resolveModelFallbacks, workerEnvSchema } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { startWorker } from './start-worker.ts';
import { hardStopMsFor } from './stop-deadline.ts';
import { declaredDeadExitCode } from './liveness/worker-heartbeat.ts';
import type { WorkerMetrics } from './worker-metrics.ts';

const config = loadConfigOrExit(workerEnvSchema);
// A fallback naming an unset key variable fails here in one line, as a bad variable does (the key is never shown);
// so does an MCP_SERVERS file, one line per bad server.
try {
  resolveModelFallbacks(config.MODEL_FALLBACKS, process.env);
  if (config.MCP_SERVERS) readMcpServersFile(config.MCP_SERVERS);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
const log = createLogger('worker', config.LOG_LEVEL);
/** Its metrics once the worker runs; errors before that are only logged. */
const started: { metrics?: WorkerMetrics } = {};

// An error that reached no handler belongs to one turn or one request, never
// to the process: stopping here cut off every running turn on this worker and
// counted each as a restart (issue 16: one model 429 did it through the
// model fetch's stream, nodejs/node#54205). So it is logged and counted, and
// the worker goes on.
const keepRunning = (origin: 'uncaughtException' | 'unhandledRejection') => (err: unknown) => {
  log.error({ err, origin }, 'unexpected error; the worker goes on');
  started.metrics?.countUnexpectedError('process');
};
process.on('uncaughtException', keepRunning('uncaughtException'));
process.on('unhandledRejection', keepRunning('unhandledRejection'));

// A worker that cannot start is broken, not unlucky: it exits. (Awaited at
// the top level, the rejection would reach the handlers above and leave a
// half-started process behind.)
// A worker declared dead (docs/restarts.md "Declared dead") exits at once, without the drain: its
// running turns now belong to whoever resumes them, and a drain would post, edit and commit them.
const exitDeclaredDead = () => process.exit(declaredDeadExitCode);
const worker = await startWorker(config, log, { onDeclaredDead: exitDeclaredDead }).catch((err: unknown) => {
  log.fatal({ err }, 'worker could not start');
  process.exit(1);
});
started.metrics = worker.metrics;

// Signals still drain gracefully; a second signal during the grace period forces the exit.
closeWithGrace({ delay: hardStopMsFor(config.DRAIN_TIMEOUT_MS), skip: ['uncaughtException', 'unhandledRejection'] }, async ({ signal }) => {
  log.info({ signal }, 'worker stopping');
  await worker.close();
});
