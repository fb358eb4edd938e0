import type { Logger } from '@switchboard/logger';
import type { PlatformSender } from '@switchboard/platforms';

/** Quick turns finish before this, so they never cost a typing call. */
const firstTypingAfterMs = 300;
/** Shows "typing…" while a turn runs; failures are logged and ignored. */
export function startTypingIndicator(sender: PlatformSender, target: Record<string, unknown>, log: Logger): { stop(): void } {
  // 0 = the platform has no typing indicator for bots (Slack's Web API).
  if (sender.typingIntervalMs <= 0) return { stop() {} };
  const send = () => sender.sendTyping(target).catch((err: unknown) => log.debug({ err }, 'typing indicator failed'));
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void send();
    interval = setInterval(() => void send(), sender.typingIntervalMs);
  }, firstTypingAfterMs);
  return {
    stop() {
      clearTimeout(first);
      clearInterval(interval);
    },
  };
}
