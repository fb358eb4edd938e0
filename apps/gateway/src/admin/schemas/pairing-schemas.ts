import { Type } from '@fastify/type-provider-typebox';
import type { PairedUser, PendingPairing } from '@switchboard/db';
import { platforms, Timestamp, toIso } from './common-schemas.ts';

export const PairingView = Type.Object({
  code: Type.String({ description: 'The 8-character one-time code the user was sent' }),
  platform: Type.String(),
  accountId: Type.String(),
  userId: Type.String({ description: "The platform's user id" }),
  requestedAt: Timestamp,
  expiresAt: Timestamp,
});

export const PairingList = Type.Object({ items: Type.Array(PairingView) });

export const PairedUserView = Type.Object({
  platform: Type.String(),
  userId: Type.String(),
  code: Type.String({ description: 'The code that was approved' }),
  approvedBy: Type.String({ description: 'The admin token name that approved it' }),
  pairedAt: Timestamp,
});

export const PairedUserList = Type.Object({ items: Type.Array(PairedUserView) });

export const CodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64, description: 'The code as the user was given it (case, spaces and dashes do not matter)' }) });

export const PairedUserParams = Type.Object({
  platform: Type.Union(platforms.map((p) => Type.Literal(p))),
  userId: Type.String({ minLength: 1, maxLength: 200 }),
});

export const ApproveResult = Type.Object({ ok: Type.Literal(true), platform: Type.String(), userId: Type.String() });
export const RevokeResult = Type.Object({ ok: Type.Literal(true), platform: Type.String(), userId: Type.String() });
export const DenyResult = Type.Object({ ok: Type.Literal(true), platform: Type.String(), userId: Type.String() });

export function viewPairing(row: PendingPairing) {
  return { ...row, requestedAt: toIso(row.requestedAt), expiresAt: toIso(row.expiresAt) };
}

export function viewPairedUser(row: PairedUser) {
  return { ...row, pairedAt: toIso(row.pairedAt) };
}
