ALTER TABLE "sessions" ADD COLUMN "resume_owed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- What the old rule owed at upgrade: the current session, when the conversation's latest turn was cut off on it or on its parent.
UPDATE "sessions" s SET "resume_owed" = true
FROM "conversations" c
JOIN LATERAL (SELECT t."session_id", t."cut_off_at" FROM "turns" t WHERE t."conversation_id" = c."id" ORDER BY t."id" DESC LIMIT 1) last ON true
WHERE s."id" = c."current_session_id" AND last."cut_off_at" IS NOT NULL
  AND (last."session_id" = s."id" OR last."session_id" = s."parent_session_id");
