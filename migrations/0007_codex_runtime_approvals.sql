CREATE TABLE "approvals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "approvals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"conversation_id" bigint NOT NULL,
	"turn_id" bigint NOT NULL,
	"token" text NOT NULL,
	"kind" text NOT NULL,
	"summary" text NOT NULL,
	"detail" text,
	"asked_of_user_key" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"decided_by_user_key" text,
	"decided_via" text,
	"question_ref" jsonb,
	"asked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	CONSTRAINT "approvals_token_unique" UNIQUE("token")
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "runtime" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "permission_profile" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "runtime_crash_streak" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "runtime_thread_id" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approvals_turn_idx" ON "approvals" USING btree ("turn_id");--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_one_pending_idx" ON "approvals" USING btree ("conversation_id") WHERE "approvals"."status" = 'pending';