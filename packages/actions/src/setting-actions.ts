import type { StreamingSetting } from '@switchboard/core';
import { isFullAccessProfile } from '@switchboard/core';
import {
  setBusyMode,
  setConversationModel,
  setConversationRuntime,
  setConversationStreaming,
  type Database,
  type DbExecutor,
  type ModelSetting,
  type RuntimeSetting,
  type RuntimeSettingChange,
} from '@switchboard/db';
import { changeOnce, type AlreadyApplied, type Door } from './door.ts';

export type BusyModeName = 'interrupt' | 'queue' | 'collect' | 'steer';

export type BusyModeOutcome = { kind: 'set'; mode: BusyModeName | null } | { kind: 'not_found' } | AlreadyApplied;
/** What the runtime setting is now; or why it was refused (full-access while CODEX_ALLOW_FULL_ACCESS is off, or through the chat). */
export type RuntimeOutcome = ({ kind: 'set' } & RuntimeSetting) | { kind: 'not_found' } | { kind: 'full_access_disabled' };
export type StreamingOutcome = { kind: 'set'; streaming: StreamingSetting | null } | { kind: 'not_found' } | AlreadyApplied;
export type ModelOutcome = ({ kind: 'set' } & ModelSetting) | { kind: 'not_found' } | AlreadyApplied;

/** A model as asked for (docs/turns.md "Model fallbacks"): null, the configured order; `fallback` left out, false. */
export interface ModelChoice {
  model: string | null;
  fallback?: boolean;
}

export interface SettingDeps {
  db: Database;
  /** CODEX_ALLOW_FULL_ACCESS: whether an operator may set the full-access profile (never the chat, whatever this says). */
  fullAccessAllowed?: boolean;
}

/**
 * The settings a conversation's turns read afresh at each turn (or, busy
 * mode, at each pass), so the next one uses the change. No session moves,
 * so there is no running turn to supersede: through the operator's door the
 * change and its audit row commit in one transaction (or neither does).
 */
export interface SettingActions {
  /** /busy <mode> and the admin busy mode (null: back to the global BUSY_INPUT_MODE). */
  setBusyMode(conversationId: number, mode: BusyModeName | null, door: Door<BusyModeOutcome>): Promise<BusyModeOutcome>;
  /**
   * The runtime a conversation's turns run on and its Codex permission
   * profile (null: the default; a field left out stays). full-access is
   * refused unless the operator setting allows it, and always through the chat door.
   */
  setRuntime(conversationId: number, change: RuntimeSettingChange, door: Door<RuntimeOutcome>): Promise<RuntimeOutcome>;
  /** Whether the conversation's slow answers stream (docs/turns.md "Streaming replies"; null: the global STREAMING). */
  setStreaming(conversationId: number, streaming: StreamingSetting | null, door: Door<StreamingOutcome>): Promise<StreamingOutcome>;
  /**
   * The model the conversation's turns ask first, and whether a failing one
   * moves on to the others (modelSettingOf). A name no worker serves is
   * stored: the gateway does not know the workers' MODEL_FALLBACKS, so its
   * turns fail with MODEL_NOT_CONFIGURED.
   */
  setModel(conversationId: number, choice: ModelChoice, door: Door<ModelOutcome>): Promise<ModelOutcome>;
}

export function createSettingActions(deps: SettingDeps): SettingActions {
  const { db } = deps;
  return {
    async setBusyMode(conversationId, mode, door) {
      const change = async (tx: DbExecutor): Promise<BusyModeOutcome> => ((await setBusyMode(tx, conversationId, mode)) ? { kind: 'set', mode } : { kind: 'not_found' });
      return door.kind === 'chat' ? changeOnce(db, door, change) : recordSetting(db, door, change);
    },
    async setRuntime(conversationId, change, door) {
      const fullAccessAllowed = door.kind === 'operator' && deps.fullAccessAllowed === true;
      const apply = async (tx: DbExecutor): Promise<RuntimeOutcome> => {
        if (isFullAccessProfile(change.permissionProfile) && !fullAccessAllowed) return { kind: 'full_access_disabled' };
        const setting = await setConversationRuntime(tx, conversationId, change);
        return setting ? { kind: 'set', ...setting } : { kind: 'not_found' };
      };
      return door.kind === 'chat' ? apply(db) : recordSetting(db, door, apply);
    },
    async setStreaming(conversationId, streaming, door) {
      const change = async (tx: DbExecutor): Promise<StreamingOutcome> => {
        const setting = await setConversationStreaming(tx, conversationId, streaming);
        return setting ? { kind: 'set', ...setting } : { kind: 'not_found' };
      };
      return door.kind === 'chat' ? changeOnce(db, door, change) : recordSetting(db, door, change);
    },
    async setModel(conversationId, choice, door) {
      const change = async (tx: DbExecutor): Promise<ModelOutcome> => {
        const setting = await setConversationModel(tx, conversationId, modelSettingOf(choice));
        return setting ? { kind: 'set', ...setting } : { kind: 'not_found' };
      };
      return door.kind === 'chat' ? changeOnce(db, door, change) : recordSetting(db, door, change);
    },
  };
}

/** What a model choice stores: fallback off unless asked, and never kept for a cleared model (no flag for a model not chosen). */
export function modelSettingOf(choice: ModelChoice): ModelSetting {
  return { model: choice.model, modelFallback: choice.model === null ? false : (choice.fallback ?? false) };
}

/** An operator's change of a setting: the change and its audit row in one transaction. */
async function recordSetting<T>(db: Database, door: Extract<Door<T>, { kind: 'operator' }>, change: (tx: DbExecutor) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const outcome = await change(tx);
    await door.record(tx, outcome, []);
    return outcome;
  });
}
