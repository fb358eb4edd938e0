import type { FuzzSummary } from '../fuzz/index.ts';
import type { InjectedFault } from './fault-injectors.ts';
import type { PlatformReplies } from './reply-analysis.ts';
import type { StoreChecks } from './store-checks.ts';

/**
 * The verdict of a chaos run: each promise of docs/guarantees.md "Chaos"
 * as one named check, failed with its first few violations.
 */

export interface ChaosCheck {
  name: string;
  ok: boolean;
  /** Violations found (0 when ok). */
  count: number;
  samples: string[];
}

export function judgeChaosRun(replies: Record<string, PlatformReplies>, store: StoreChecks, faults: InjectedFault[], fuzz?: FuzzSummary): ChaosCheck[] {
  const sum = (pick: (r: PlatformReplies) => number) => Object.values(replies).reduce((n, r) => n + pick(r), 0);
  const check = (name: string, problems: string[]): ChaosCheck => ({ name, ok: problems.length === 0, count: problems.length, samples: problems.slice(0, 5) });
  const counted = (name: string, n: number, what: string): ChaosCheck => ({ name, ok: n === 0, count: n, samples: n === 0 ? [] : [`${n} ${what}`] });
  return [
    {
      name: 'every owed reply delivered (lost = 0)',
      ok: sum((r) => r.lost) === 0,
      count: sum((r) => r.lost),
      samples: Object.values(replies).flatMap((r) => r.lostSamples).slice(0, 5),
    },
    {
      name: 'replies in line order (reordered = 0)',
      ok: sum((r) => r.outOfOrder) === 0,
      count: sum((r) => r.outOfOrder),
      samples: Object.values(replies).flatMap((r) => r.reorderedSamples).slice(0, 5),
    },
    counted('replies are the recorded text (mismatched = 0)', sum((r) => r.mismatched), 'replies with the wrong text'),
    // Discord sends carry a nonce, so a retried send is the same message; Slack and Telegram are at least once (counted, not failed).
    counted('Discord exactly once (duplicates = 0)', replies.discord?.duplicated ?? 0, 'duplicate Discord replies'),
    check('every human line stored once, in order', store.userLines),
    check('human lines stored in the order they were sent', store.sentOrder),
    check('session chains are lines (no fork)', store.forks),
    check('no API-only text stored', store.apiOnlyText),
    check('no conversation suspended', store.suspended),
    check('no stuck running turn', store.stuckTurns),
    check('no stranded pending input', store.strandedInput),
    check('outbox delivered', store.undeliveredOutbox),
    check('queues drained', store.queues),
    // A 503 is an outage answer (Postgres down on purpose) and a reset a killed gateway: both expected here.
    // Any other 5xx, or a 2xx to an unauthenticated or invalid payload, is a broken promise.
    check('fuzzed bad input refused without harm', fuzz ? [...fuzz.fiveXx.filter((e) => e.status !== 503), ...fuzz.violations].map((e) => `${e.route} ${e.cls} #${e.seq} (${e.kinds.join(',')}): ${e.status}`) : []),
    check(
      'every fault injected and undone',
      faults.filter((f) => f.error).map((f) => `${f.fault.kind} at +${f.fault.atMs} ms: ${f.error}`),
    ),
  ];
}
