CREATE TABLE "discord_gateway_sessions" (
	"token_id" text PRIMARY KEY NOT NULL,
	"holder_epoch" bigint DEFAULT 0 NOT NULL,
	"session_id" text,
	"resume_url" text,
	"seq" integer,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
