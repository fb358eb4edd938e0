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
