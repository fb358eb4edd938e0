/**
 * `npm run doctor`: is this environment ready to run Switchboard? Checks the
 * configuration (every bad variable at once), Postgres, migrations, Redis, the
 * model endpoint, the Codex runtime's command, workspaces and sandbox, HOOKS_FILE, MCP_SERVERS (each enabled server started and its tools
 * listed, then stopped), each configured platform's credentials against its API and
 * Telegram's webhook, one line per check with what to do when it
 * fails. Exit code 1 if any check fails (warnings do not fail).
 */
import { checkAccess, checkConfig, checkDiscord, checkHooks, checkModel, checkPostgres, checkPostgresSession, checkSlack, checkTelegram, type CheckResult } from './lib/doctor-checks.ts';
import { checkRedis } from './lib/doctor-redis.ts';
import { checkCodex, checkCodexConfinement } from './lib/doctor-codex.ts';
import { checkMcp } from './lib/doctor-mcp.ts';

const marks: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

function print(result: CheckResult): void {
  const fix = result.fix && (result.status === 'fail' || result.status === 'warn') ? ` → ${result.fix}` : '';
  console.log(`${marks[result.status]}  ${result.name.padEnd(18)} ${result.detail}${fix}`);
}

async function main(): Promise<number> {
  const env = process.env;
  const results: CheckResult[] = [];
  const report = (found: CheckResult | CheckResult[]) => {
    for (const result of [found].flat()) {
      results.push(result);
      print(result);
    }
  };
  report(checkConfig(env));
  report(checkAccess(env));
  report(checkHooks(env));
  report(await checkPostgres(env));
  report(await checkPostgresSession(env));
  report(await checkRedis(env));
  report(await checkModel(env));
  report(await checkCodex(env));
  report(await checkCodexConfinement(env));
  report(await checkMcp(env));
  report((await Promise.all([checkTelegram(env), checkSlack(env), checkDiscord(env)])).flat());
  const failed = results.filter((result) => result.status === 'fail').length;
  const warned = results.filter((result) => result.status === 'warn').length;
  console.log(failed === 0 ? `\nAll checks passed${warned ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}.` : `\n${failed} check${failed > 1 ? 's' : ''} failed.`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`doctor could not finish: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 2;
  },
);
