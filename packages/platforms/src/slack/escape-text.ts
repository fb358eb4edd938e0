/**
 * Slack reads `<…>` in a message's text as control sequences: `<!channel>`,
 * `<!here>` and `<!everyone>` notify a whole channel, `<@U…>` pings a user,
 * `<url|label>` makes a link. Model output is untrusted, so the three
 * characters Slack's formatting reference names are escaped before posting;
 * the reader then sees the text exactly as the model wrote it.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** `&` grows the most (`&amp;`): an escaped text is at most this many times longer. */
export const slackEscapeGrowth = 5;
