import closeWithGrace from 'close-with-grace';
import { gatewayEnvSchema, loadConfigOrExit } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { startGateway } from './start-gateway.ts';

const config = loadConfigOrExit(gatewayEnvSchema);
const log = createLogger('gateway', config.LOG_LEVEL);
const gateway = await startGateway(config, log);

// A second signal during the grace period forces the exit.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'gateway stopping after an error');
  else log.info({ signal }, 'gateway stopping');
  await gateway.close();
});
