import { eq, sql } from 'drizzle-orm';
import { conversations } from '../schema/conversations.ts';
import type { DbExecutor } from './admin-executor.ts';

type RuntimeName = NonNullable<(typeof conversations.$inferSelect)['runtime']>;
type ProfileName = NonNullable<(typeof conversations.$inferSelect)['permissionProfile']>;

/** What an operator changes; a field left out is left as it is, null means "the default". */
export interface RuntimeSettingChange {
  runtime?: RuntimeName | null;
  permissionProfile?: ProfileName | null;
}

export interface RuntimeSetting {
  runtime: RuntimeName | null;
  permissionProfile: ProfileName | null;
}

/**
 * Sets a conversation's runtime and/or Codex permission profile
 * (docs/codex.md). Read by the worker at each turn, so the next turn uses
 * it; a turn running now keeps what it started with. Returns the setting
 * now stored, or undefined when there is no such conversation.
 */
export async function setConversationRuntime(db: DbExecutor, conversationId: number, change: RuntimeSettingChange): Promise<RuntimeSetting | undefined> {
  const [row] = await db
    .update(conversations)
    .set({
      ...(change.runtime !== undefined ? { runtime: change.runtime } : {}),
      ...(change.permissionProfile !== undefined ? { permissionProfile: change.permissionProfile } : {}),
      updatedAt: sql`now()`,
    })
    .where(eq(conversations.id, conversationId))
    .returning({ runtime: conversations.runtime, permissionProfile: conversations.permissionProfile });
  return row;
}

type StreamingName = NonNullable<(typeof conversations.$inferSelect)['streaming']>;

/**
 * Sets whether a conversation's replies stream (docs/turns.md "Streaming
 * replies"); null: the global STREAMING. Read by the worker at each turn.
 * Returns the setting now stored, or undefined when there is no such conversation.
 */
export async function setConversationStreaming(db: DbExecutor, conversationId: number, streaming: StreamingName | null): Promise<{ streaming: StreamingName | null } | undefined> {
  const [row] = await db
    .update(conversations)
    .set({ streaming, updatedAt: sql`now()` })
    .where(eq(conversations.id, conversationId))
    .returning({ streaming: conversations.streaming });
  return row;
}

/** A conversation's chosen model (docs/turns.md "Model fallbacks"); model null: the configured order. */
export interface ModelSetting {
  model: string | null;
  modelFallback: boolean;
}

/**
 * Sets the model an operator chose for a conversation, and whether its turns
 * may fall back to the other configured models. Read by the worker at each
 * turn. Returns the setting now stored, or undefined when there is no such
 * conversation.
 */
export async function setConversationModel(db: DbExecutor, conversationId: number, setting: ModelSetting): Promise<ModelSetting | undefined> {
  const [row] = await db
    .update(conversations)
    .set({ model: setting.model, modelFallback: setting.modelFallback, updatedAt: sql`now()` })
    .where(eq(conversations.id, conversationId))
    .returning({ model: conversations.model, modelFallback: conversations.modelFallback });
  return row;
}
