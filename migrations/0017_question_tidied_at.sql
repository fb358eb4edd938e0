ALTER TABLE "approvals" ADD COLUMN "question_tidied_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "approvals_untidied_idx" ON "approvals" USING btree ("id") WHERE "approvals"."question_tidied_at" is null and "approvals"."question_ref" is not null;--> statement-breakpoint
-- Questions settled before this column: taken as tidied (the sweep does not edit old messages).
UPDATE "approvals" SET "question_tidied_at" = coalesce("decided_at", now()) WHERE "status" <> 'pending';
