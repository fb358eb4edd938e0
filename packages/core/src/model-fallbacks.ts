/**
 * Model fallbacks (issue 22 item 5; docs/turns.md "Model fallbacks"): which
 * endpoint a turn tries first, and which failures move it down the list.
 * Pure: the caller keeps the cooldowns and the clock.
 */

/** How a model request failed, in the runtime's words (no vendor types). */
export type ModelFailureKind =
  | { kind: 'status'; status: number }
  | { kind: 'timeout' }
  | { kind: 'connection' }
  | { kind: 'aborted' }
  | { kind: 'other' };

/**
 * Whether a failure moves the turn to the next endpoint: a rate limit (429),
 * a server error (5xx), a request timeout (408 or no answer in time) or a lost
 * connection say this endpoint cannot answer now, another may. A refusal of
 * the request itself (400, 401, 403, 404, 422 …) would be refused by the next
 * endpoint too, or means our own set-up is wrong, and an abort is the user's
 * or the worker's decision: neither moves on.
 */
export function movesToNextModel(failure: ModelFailureKind): boolean {
  if (failure.kind === 'timeout' || failure.kind === 'connection') return true;
  if (failure.kind !== 'status') return false;
  return failure.status === 429 || failure.status === 408 || failure.status >= 500;
}

/**
 * The order to try the endpoints in (their indexes): those not cooling down in
 * list order, then those still cooling down (`cooldownUntil[i] > now`) in list
 * order. A cooled-down endpoint is never dropped: when every endpoint failed
 * lately the turn still tries them all, the primary first.
 */
export function orderModelEndpoints(count: number, cooldownUntil: ReadonlyMap<number, number>, now: number): number[] {
  const indexes = Array.from({ length: count }, (_, i) => i);
  const cooling = (i: number) => (cooldownUntil.get(i) ?? Number.NEGATIVE_INFINITY) > now;
  return [...indexes.filter((i) => !cooling(i)), ...indexes.filter(cooling)];
}

/** The model an operator chose for one conversation (`conversations.model`), and whether its turns may fall back. */
export interface ChosenModel {
  model: string;
  /** false: only the chosen model is asked; true: on its failure the turn moves down the rest of the list. */
  fallback: boolean;
}

/** The endpoints a turn tries, in order, or why it cannot run: no configured endpoint serves the chosen model. */
export type ModelPlan = { kind: 'ordered'; order: number[] } | { kind: 'not_configured'; model: string };

/**
 * The order of one turn's endpoints (their indexes in `models`, the primary
 * first): without a chosen model, `orderModelEndpoints`. A chosen model goes
 * first whatever its cooldown (the operator asked for it; the first endpoint
 * serving that name when two do); without fallback it is the only one, with
 * fallback the others follow in `orderModelEndpoints` order. A name no
 * endpoint serves is `not_configured`: the operator's choice is never
 * silently replaced by another model.
 */
export function planModelOrder(models: readonly string[], cooldownUntil: ReadonlyMap<number, number>, now: number, chosen: ChosenModel | null): ModelPlan {
  const order = orderModelEndpoints(models.length, cooldownUntil, now);
  if (!chosen) return { kind: 'ordered', order };
  const index = models.indexOf(chosen.model);
  if (index < 0) return { kind: 'not_configured', model: chosen.model };
  return { kind: 'ordered', order: chosen.fallback ? [index, ...order.filter((i) => i !== index)] : [index] };
}
