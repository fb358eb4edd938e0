ALTER TABLE "sessions" ADD COLUMN "runtime_synced_seq" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Existing sessions: their thread is taken to have seen what is stored (what it missed before this column cannot be told).
UPDATE "sessions" SET "runtime_synced_seq" = "last_seq";
