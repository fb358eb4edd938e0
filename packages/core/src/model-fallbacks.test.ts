import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { movesToNextModel, orderModelEndpoints, planModelOrder, type ModelFailureKind } from './model-fallbacks.ts';

describe('movesToNextModel', () => {
  it('moves on for 429, 408, 5xx, timeouts and lost connections', () => {
    const moving: ModelFailureKind[] = [{ kind: 'status', status: 429 }, { kind: 'status', status: 408 }, { kind: 'status', status: 500 }, { kind: 'status', status: 503 }, { kind: 'timeout' }, { kind: 'connection' }];
    expect(moving.map(movesToNextModel)).toEqual(moving.map(() => true));
  });

  it('stays for refusals of the request, aborts and anything else', () => {
    const staying: ModelFailureKind[] = [{ kind: 'status', status: 400 }, { kind: 'status', status: 401 }, { kind: 'status', status: 404 }, { kind: 'status', status: 422 }, { kind: 'aborted' }, { kind: 'other' }];
    expect(staying.map(movesToNextModel)).toEqual(staying.map(() => false));
  });
});

describe('orderModelEndpoints', () => {
  it('keeps the list order when nothing cools down', () => {
    expect(orderModelEndpoints(3, new Map(), 1000)).toEqual([0, 1, 2]);
  });

  it('puts a primary still cooling down last, and takes it back first once its cooldown ended', () => {
    const cooldowns = new Map([[0, 2000]]);
    expect(orderModelEndpoints(3, cooldowns, 1999)).toEqual([1, 2, 0]);
    expect(orderModelEndpoints(3, cooldowns, 2000)).toEqual([0, 1, 2]);
  });

  it('tries all of them, in list order, when all cool down', () => {
    expect(orderModelEndpoints(2, new Map([[0, 5000], [1, 5000]]), 10)).toEqual([0, 1]);
  });

  it('is a permutation with every fresh endpoint before every cooling one, each group in list order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), fc.array(fc.option(fc.integer({ min: 0, max: 100 })), { maxLength: 8 }), fc.integer({ min: 0, max: 100 }), (count, untils, now) => {
        const cooldowns = new Map<number, number>();
        untils.forEach((until, i) => {
          if (until !== null) cooldowns.set(i, until);
        });
        const order = orderModelEndpoints(count, cooldowns, now);
        expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, i) => i));
        const cooling = order.map((i) => (cooldowns.get(i) ?? -1) > now);
        const firstCooling = cooling.indexOf(true);
        if (firstCooling >= 0) expect(cooling.slice(firstCooling).every(Boolean)).toBe(true);
        const fresh = order.filter((_, k) => !cooling[k]);
        const cold = order.filter((_, k) => cooling[k]);
        expect(fresh).toEqual([...fresh].sort((a, b) => a - b));
        expect(cold).toEqual([...cold].sort((a, b) => a - b));
      }),
    );
  });
});

describe('planModelOrder', () => {
  const models = ['primary', 'second', 'third'];

  it('without a chosen model is the configured order, cooldowns applied', () => {
    expect(planModelOrder(models, new Map(), 0, null)).toEqual({ kind: 'ordered', order: [0, 1, 2] });
    expect(planModelOrder(models, new Map([[0, 10]]), 5, null)).toEqual({ kind: 'ordered', order: [1, 2, 0] });
  });

  it('a chosen model without fallback is the only one asked, even while it cools down', () => {
    expect(planModelOrder(models, new Map(), 0, { model: 'primary', fallback: false })).toEqual({ kind: 'ordered', order: [0] });
    expect(planModelOrder(models, new Map([[2, 10]]), 5, { model: 'third', fallback: false })).toEqual({ kind: 'ordered', order: [2] });
  });

  it('a chosen model with fallback goes first, the others follow in the configured order', () => {
    expect(planModelOrder(models, new Map(), 0, { model: 'second', fallback: true })).toEqual({ kind: 'ordered', order: [1, 0, 2] });
    expect(planModelOrder(models, new Map([[0, 10], [1, 10]]), 5, { model: 'second', fallback: true })).toEqual({ kind: 'ordered', order: [1, 2, 0] });
  });

  it('a name no endpoint serves is not configured, whether or not fallback is allowed', () => {
    expect(planModelOrder(models, new Map(), 0, { model: 'gone', fallback: true })).toEqual({ kind: 'not_configured', model: 'gone' });
    expect(planModelOrder(models, new Map(), 0, { model: 'Primary', fallback: false })).toEqual({ kind: 'not_configured', model: 'Primary' });
  });

  it('with fallback is always a permutation starting at the chosen one; without, the chosen one alone', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }), fc.nat(), fc.boolean(), fc.array(fc.nat({ max: 20 }), { maxLength: 6 }), (names, pick, fallback, untils) => {
        const index = pick % names.length;
        const cooldowns = new Map(untils.map((until, i) => [i, until] as [number, number]));
        const plan = planModelOrder(names, cooldowns, 10, { model: names[index] as string, fallback });
        if (plan.kind !== 'ordered') throw new Error('a configured name is always planned');
        expect(plan.order[0]).toBe(index);
        if (!fallback) expect(plan.order).toEqual([index]);
        else expect([...plan.order].sort((a, b) => a - b)).toEqual(names.map((_, i) => i));
      }),
    );
  });
});
