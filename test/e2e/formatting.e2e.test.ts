import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendDiscordMessage, waitForDiscordGateway, waitForDiscordMessages } from '../support/discord.ts';
import { TestSystem } from '../support/system.ts';

// What the model writes: the same Markdown answer reaches each platform in its own markup.
const answer = [
  '## Plan',
  '',
  'Use **bold**, *italic*, `a < b && c` and [the docs](https://example.com/docs?a=1&b=2).',
  '',
  '- first',
  '- second',
  '',
  '1. one',
  '2. two',
  '',
  '```ts',
  'const ok = 1 < 2;',
  '```',
].join('\n');

describe('replies formatted as each platform shows them', () => {
  let system: TestSystem;

  beforeAll(async () => {
    // One system for all three platforms: one model script answers each.
    system = await TestSystem.start({ slack: true, discord: true });
    await waitForDiscordGateway(system.simUrl, { identifies: 1, connected: true });
    await system.setModelScript({ rules: [{ match: 'format it', reply: answer, times: 10 }] });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('Telegram: HTML with parse_mode HTML, shown without markup', async () => {
    await system.sendTelegram({ chatId: 2201, text: 'format it' });
    const [shown] = await system.waitForTelegram(2201, 1);
    const sent = (await (await fetch(`${system.simUrl}/control/telegram/sent?chat_id=2201`)).json()) as { rawText?: string; parse_mode?: string }[];
    expect(sent[0]?.parse_mode).toBe('HTML');
    expect(sent[0]?.rawText).toBe(
      [
        '<b>Plan</b>',
        '',
        'Use <b>bold</b>, <i>italic</i>, <code>a &lt; b &amp;&amp; c</code> and <a href="https://example.com/docs?a=1&amp;b=2">the docs</a>.',
        '',
        '• first\n• second',
        '',
        '1. one\n2. two',
        '',
        '<pre><code class="language-ts">const ok = 1 &lt; 2;</code></pre>',
      ].join('\n'),
    );
    expect(shown?.text).toBe('Plan\n\nUse bold, italic, a < b && c and the docs.\n\n• first\n• second\n\n1. one\n2. two\n\nconst ok = 1 < 2;');
  });

  it('Slack: mrkdwn', async () => {
    await system.sendSlack({ channel: 'D2201', user: 'U2201', text: 'format it' });
    const [reply] = await system.waitForSlack('D2201', 1);
    expect(reply?.text).toBe(
      [
        '*Plan*',
        '',
        'Use *bold*, _italic_, `a &lt; b &amp;&amp; c` and <https://example.com/docs?a=1&amp;b=2|the docs>.',
        '',
        '• first\n• second',
        '',
        '1. one\n2. two',
        '',
        '```\nconst ok = 1 &lt; 2;\n```',
      ].join('\n'),
    );
  });

  it('Discord: the Markdown unchanged, since Discord renders it itself', async () => {
    const channelId = '5000000000000022010';
    await sendDiscordMessage(system.simUrl, { channelId, content: 'format it' });
    const [reply] = await waitForDiscordMessages(system.simUrl, channelId, 1);
    expect(reply?.content).toBe(answer);
  });
});
