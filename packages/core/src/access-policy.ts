import type { Platform } from './conversation-key.ts';

/**
 * `open`: everyone. `allowlist`: only allowlisted users. `pairing` (direct
 * messages only): allowlisted users; anyone else is offered a one-time code an
 * operator can approve, which adds them to the stored allowlist.
 */
export type DmPolicy = 'open' | 'allowlist' | 'pairing';

export interface AccessPolicy {
  /** Who may talk to the bot in direct messages. */
  dmPolicy: DmPolicy;
  /** The same for group chats and channels: there is no pairing there (a code is never posted where others read it). */
  groupPolicy: 'open' | 'allowlist';
  allowedUsers: Partial<Record<Platform, ReadonlySet<string>>>;
  /** Discord only: members holding one of these roles count as allowlisted. */
  allowedDiscordRoles: ReadonlySet<string>;
}

export interface AccessRequest {
  platform: Platform;
  userId: string;
  /** A one-to-one chat (conversation address without a user scope). */
  isDirect: boolean;
  roles?: readonly string[];
  /** The user was paired (approved by an operator): stored in Postgres, so looked up only when it can matter (`consultsPairedUsers`). */
  paired?: boolean;
}

/** `needs_pairing`: not allowlisted, in a direct message under DM_POLICY=pairing; offer (or remind of) a code. */
export type AccessVerdict = 'allow' | 'not_allowed' | 'needs_pairing';

/**
 * Access: users outside an allowlist, where one applies, get a refusal (or,
 * in DMs under `pairing`, a code), not a turn. The allowlist is the
 * environment's ids and Discord roles together with the paired users.
 */
export function decideAccess(policy: AccessPolicy, request: AccessRequest): AccessVerdict {
  const mode = request.isDirect ? policy.dmPolicy : policy.groupPolicy;
  if (mode === 'open') return 'allow';
  if (policy.allowedUsers[request.platform]?.has(request.userId)) return 'allow';
  if (request.platform === 'discord' && request.roles?.some((role) => policy.allowedDiscordRoles.has(role))) return 'allow';
  if (request.paired) return 'allow';
  return mode === 'pairing' ? 'needs_pairing' : 'not_allowed';
}
