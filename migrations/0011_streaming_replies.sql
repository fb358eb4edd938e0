ALTER TABLE "conversations" ADD COLUMN "streaming" text;--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "streamed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "outbox_streaming_idx" ON "outbox" USING btree ("conversation_id") WHERE "outbox"."status" = 'streaming';