// Moved to scripts/lib/services so apps (the chaos run) can start their own Postgres and Redis; tests keep importing from here.
export * from '../../scripts/lib/services/harness-error.ts';
