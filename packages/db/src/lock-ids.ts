/**
 * Every Postgres advisory lock the system takes, in one place, so two features
 * can never pick the same key by accident. Two-key locks use the first key as
 * the namespace below and the second as the object id.
 */
export enum AdvisoryLock {
  /** Held while migrations run, so several processes can call db:migrate at once. */
  Migrate = 0x5b0a_0001,
  /** Namespace for compression locks: (CompressSession, session id). */
  CompressSession = 0x5b0a_0002,
  /** Held by the one worker that delivers lifecycle events to webhooks. */
  EventDelivery = 0x5b0a_0003,
  /** Namespace for pairing requests: (PairingPlatform, hashtext(platform)), so the per-platform cap and one code per user hold. */
  PairingPlatform = 0x5b0a_0004,
  /** Namespace for creating schedules: (ScheduleCreator, hashtext(created_by)), so USER_MAX_SCHEDULES holds under races. */
  ScheduleCreator = 0x5b0a_0005,
}
