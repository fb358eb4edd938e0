import { describe, expect, it } from 'vitest';
import { endOfStoppedTurn, type TurnEnd } from './codex-turn-end.ts';

describe('endOfStoppedTurn', () => {
  const failed: TurnEnd = { kind: 'failed', code: 'MODEL_FAILED', message: 'boom' };
  const crashed: TurnEnd = { kind: 'crashed', reason: 'closed by the pool' };

  it('leaves every end as it is when nobody asked to stop', () => {
    for (const end of [{ kind: 'completed' }, { kind: 'interrupted' }, failed, crashed] as TurnEnd[]) expect(endOfStoppedTurn(end, false)).toEqual(end);
  });

  it('makes a completed turn and a crash interrupted once a stop was asked (issue 29, defect 6), and keeps a failure', () => {
    expect(endOfStoppedTurn({ kind: 'completed' }, true)).toEqual({ kind: 'interrupted' });
    expect(endOfStoppedTurn(crashed, true)).toEqual({ kind: 'interrupted' });
    expect(endOfStoppedTurn({ kind: 'interrupted' }, true)).toEqual({ kind: 'interrupted' });
    expect(endOfStoppedTurn(failed, true)).toEqual(failed);
  });
});
