CREATE TABLE "paired_users" (
	"platform" text NOT NULL,
	"user_id" text NOT NULL,
	"code" text NOT NULL,
	"approved_by" text NOT NULL,
	"paired_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "paired_users_platform_user_id_pk" PRIMARY KEY("platform","user_id")
);
--> statement-breakpoint
CREATE TABLE "pairings" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "pairings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"platform" text NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"code" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"conversation_id" bigint NOT NULL,
	"target" jsonb NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_told_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by" text,
	CONSTRAINT "pairings_code_unique" UNIQUE("code")
);
--> statement-breakpoint
ALTER TABLE "pairings" ADD CONSTRAINT "pairings_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pairings_one_pending_idx" ON "pairings" USING btree ("platform","user_id") WHERE "pairings"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "pairings_platform_status_idx" ON "pairings" USING btree ("platform","status");