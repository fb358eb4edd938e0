/**
 * Which runtime runs a conversation's turns, and what a Codex conversation may
 * touch (docs/codex.md). The words are the project's: the Codex runtime maps a
 * profile to its own sandbox and approval policy at its edge.
 */
export const agentRuntimeNames = ['openai', 'codex'] as const;
export type AgentRuntimeName = (typeof agentRuntimeNames)[number];

/**
 * read-only: read-only sandbox, approval on request (the default).
 * workspace-write: may write inside the conversation's workspace, approval on request.
 * full-access: no sandbox; only where an operator setting allows it, never chosen from the chat.
 */
export const permissionProfiles = ['read-only', 'workspace-write', 'full-access'] as const;
export type PermissionProfile = (typeof permissionProfiles)[number];

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
  if (stored === 'full-access' && !fullAccessAllowed) return 'read-only';
  return stored ?? 'read-only';
}
