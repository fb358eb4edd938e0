import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit, workerEnvSchema } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { startWorker } from './start-worker.ts';

const config = loadConfigOrExit(workerEnvSchema);
const log = createLogger('worker', config.LOG_LEVEL);
const worker = await startWorker(config, log);

// A second signal during the grace period forces the exit.
closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'worker stopping after an error');
  else log.info({ signal }, 'worker stopping');
  await worker.close();
});
