/**
 * Which runtime runs a conversation's turns, and what a Codex conversation may
 * touch (docs/codex.md). The words are the project's: the Codex runtime maps a
 * profile to its own sandbox and approval policy at its edge.
 */
export const agentRuntimeNames = ['openai', 'codex'] as const;
export type AgentRuntimeName = (typeof agentRuntimeNames)[number];

/**
 * read-only: read-only sandbox, every command but Codex's known-safe reads asks (the default).
 * workspace-write: may write inside the conversation's workspace; anything beyond it asks.
 * full-access: no sandbox, but every command but Codex's known-safe reads still asks.
 * full-access-unattended: no sandbox and nothing asks; an operator's explicit choice for
 * one conversation (issue 30, finding 1: full access used to ask nothing by default).
 * Both full-access profiles exist only where an operator setting allows them, never chosen from the chat.
 */
export const permissionProfiles = ['read-only', 'workspace-write', 'full-access', 'full-access-unattended'] as const;
export type PermissionProfile = (typeof permissionProfiles)[number];

/** The profiles without a sandbox, which CODEX_ALLOW_FULL_ACCESS gates. */
export function isFullAccessProfile(profile: PermissionProfile | null | undefined): boolean {
  return profile === 'full-access' || profile === 'full-access-unattended';
}

/** The runtime a conversation uses: its own choice, else the global one. */
export function resolveAgentRuntime(conversationChoice: AgentRuntimeName | null | undefined, globalDefault: AgentRuntimeName): AgentRuntimeName {
  return conversationChoice ?? globalDefault;
}

/**
 * The profile a Codex turn runs with. A stored full-access profile counts only
 * while the operator setting allows it: revoking the setting takes effect at the
 * next turn, falling back to the safest profile rather than a middle one.
 */
export function resolvePermissionProfile(stored: PermissionProfile | null | undefined, fullAccessAllowed: boolean): PermissionProfile {
  if (isFullAccessProfile(stored) && !fullAccessAllowed) return 'read-only';
  return stored ?? 'read-only';
}
