import type { Platform } from './conversation-key.ts';

export interface AccessPolicy {
  /** Who may talk to the bot in direct messages: everyone, or only allowlisted users. */
  dmPolicy: 'open' | 'allowlist';
  /** The same for group chats and channels. */
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
}

/** Access: users outside an allowlist, where one applies, get a refusal, not a turn. */
export function decideAccess(policy: AccessPolicy, request: AccessRequest): 'allow' | 'not_allowed' {
  const mode = request.isDirect ? policy.dmPolicy : policy.groupPolicy;
  if (mode === 'open') return 'allow';
  if (policy.allowedUsers[request.platform]?.has(request.userId)) return 'allow';
  if (request.platform === 'discord' && request.roles?.some((role) => policy.allowedDiscordRoles.has(role))) return 'allow';
  return 'not_allowed';
}
