import { renderSlackMrkdwn, renderTelegramHtml } from '@switchboard/platforms';
import type { PlatformName } from './drivers/platform-driver.ts';

/**
 * A recorded reply (Markdown, as the model writes it) as the bot must post it
 * on `platform`: Telegram HTML, Slack mrkdwn (escaped), Discord's Markdown as
 * it is. The bot formats at the last step of sending (packages/platforms,
 * README "Formatting"), so the reply checker compares what was posted with
 * this, i.e. what the user reads, words and formatting both. The renderers
 * are the bot's own pure functions: whether they format correctly is proven
 * by their tests and test/e2e/formatting.e2e.test.ts; here they only tell a
 * lost, swapped or corrupted reply from a formatted one.
 */
export function formatRecordedReply(platform: PlatformName, markdown: string): string {
  if (platform === 'telegram') return renderTelegramHtml(markdown);
  if (platform === 'slack') return renderSlackMrkdwn(markdown);
  return markdown;
}
