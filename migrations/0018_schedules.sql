CREATE TABLE "schedules" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "schedules_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"conversation_id" bigint NOT NULL,
	"prompt" text NOT NULL,
	"run_at" timestamp with time zone,
	"cron" text,
	"time_zone" text DEFAULT 'UTC' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_by" text NOT NULL,
	"origin_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone,
	"last_occurrence_at" timestamp with time zone,
	"last_outcome" text,
	"runs" integer DEFAULT 0 NOT NULL,
	"missed" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "schedules_origin_key_unique" UNIQUE("origin_key")
);
--> statement-breakpoint
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "schedules_conversation_idx" ON "schedules" USING btree ("conversation_id","status");--> statement-breakpoint
CREATE INDEX "schedules_active_creator_idx" ON "schedules" USING btree ("created_by") WHERE "schedules"."status" = 'active';