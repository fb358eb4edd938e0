import type { Database } from '../client.ts';

/** What a resume needs (docs/guarantees.md, Discord): the session, where to resume it, and the last stored sequence. */
export interface StoredDiscordSession {
  sessionId: string;
  resumeUrl: string;
  seq: number | null;
}

/**
 * Called by a process that has just taken the Discord connection lease:
 * bumps the token's holder epoch and returns it. Every later write names
 * the epoch, so once a successor has claimed, a late write of the previous
 * holder changes nothing.
 */
export async function claimDiscordSessionHold(db: Database, tokenId: string): Promise<number> {
  const [row] = await db.$client<{ holder_epoch: string }[]>`
    insert into discord_gateway_sessions (token_id, holder_epoch) values (${tokenId}, 1)
    on conflict (token_id) do update set holder_epoch = discord_gateway_sessions.holder_epoch + 1
    returning holder_epoch`;
  return Number(row?.holder_epoch);
}

/** The stored session, unless none is stored or it was last written more than `maxAgeMs` ago (Discord no longer resumes it). */
export async function loadDiscordSession(db: Database, tokenId: string, maxAgeMs: number): Promise<StoredDiscordSession | undefined> {
  const [row] = await db.$client<{ session_id: string; resume_url: string; seq: number | null }[]>`
    select session_id, resume_url, seq from discord_gateway_sessions
    where token_id = ${tokenId} and session_id is not null and resume_url is not null
      and updated_at > now() - ${maxAgeMs}::int * interval '1 millisecond'`;
  return row ? { sessionId: row.session_id, resumeUrl: row.resume_url, seq: row.seq } : undefined;
}

/** Writes (or, with undefined, forgets) the session; false when another holder has claimed since `epoch` (nothing written). */
export async function saveDiscordSession(db: Database, tokenId: string, epoch: number, session: StoredDiscordSession | undefined): Promise<boolean> {
  const rows = await db.$client`
    update discord_gateway_sessions
    set session_id = ${session?.sessionId ?? null}, resume_url = ${session?.resumeUrl ?? null}, seq = ${session?.seq ?? null}, updated_at = now()
    where token_id = ${tokenId} and holder_epoch = ${epoch}`;
  return rows.count === 1;
}
