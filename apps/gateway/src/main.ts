import closeWithGrace from 'close-with-grace';
import { ConfigError, gatewayEnvSchema, loadConfigOrExit } from '@switchboard/config';
import { createLogger } from '@switchboard/logger';
import { startGateway } from './start-gateway.ts';

const config = loadConfigOrExit(gatewayEnvSchema);
const log = createLogger('gateway', config.LOG_LEVEL);
const gateway = await startGateway(config, log).catch((error: unknown) => {
  // A configuration read at start (HOOKS_FILE): its lines, one per bad entry, and exit 1, as loadConfigOrExit does.
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});

// A second signal during the grace period forces the exit.
closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) log.error({ err }, 'gateway stopping after an error');
  else log.info({ signal }, 'gateway stopping');
  await gateway.close();
});
