ALTER TABLE "turns" ADD COLUMN "user_key" text;--> statement-breakpoint
ALTER TABLE "turns" ADD COLUMN "user_slot" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "turns_user_slot_idx" ON "turns" USING btree ("user_key","user_slot") WHERE "turns"."status" = 'running';