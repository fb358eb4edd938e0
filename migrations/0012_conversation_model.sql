ALTER TABLE "conversations" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "model_fallback" boolean DEFAULT false NOT NULL;