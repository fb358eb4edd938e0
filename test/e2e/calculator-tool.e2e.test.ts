import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestSystem } from '../support/system.ts';

// Issue 17, defect 1: a chat user reaches the calculator through the model, so hostile
// expressions must come back as tool errors while the worker process keeps answering.
const recursion = 'f(n) = n < 2 ? n : f(n-1) + f(n-2); f(40)';
const bigMatrix = 'size(zeros(8000,8000))';

describe('calculator tool through the real route', () => {
  let system: TestSystem;

  beforeAll(async () => {
    system = await TestSystem.start({ workerProcesses: true });
    await system.setModelScript({
      rules: [
        {
          match: 'hostile maths',
          toolCalls: [
            { name: 'calculator', arguments: { expression: recursion } },
            { name: 'calculator', arguments: { expression: bigMatrix } },
            { name: 'calculator', arguments: { expression: '10 km to m' } },
          ],
        },
      ],
    });
  });
  afterAll(async () => {
    await system?.close();
  });

  it('answers hostile expressions with tool errors, promptly, and answers the next message', async () => {
    const chatId = 1701;
    const started = Date.now();
    await system.sendTelegram({ chatId, text: 'do some hostile maths' });
    const [reply] = await system.waitForTelegram(chatId, 1, 15_000);
    expect(reply?.text).toBe('echo: do some hostile maths');
    expect(Date.now() - started).toBeLessThan(15_000);

    const tools = await system.sql<{ tool_name: string; content: string }[]>`
      select m.tool_name, m.content from messages m
      join conversations c on c.current_session_id = m.session_id
      where c.chat_id = ${String(chatId)} and m.role = 'tool' order by m.seq`;
    expect(tools.map((t) => t.tool_name)).toEqual(['calculator', 'calculator', 'calculator']);
    expect(tools[0]?.content).toMatch(/^error: refused: .*only arithmetic is allowed/);
    expect(tools[1]?.content).toMatch(/^error: refused: .*only arithmetic is allowed/);
    expect(tools[2]?.content).toBe('10000 m');

    await system.sendTelegram({ chatId, text: 'still there?' });
    const replies = await system.waitForTelegram(chatId, 2, 10_000);
    expect(replies[1]?.text).toBe('echo: still there?');
  });
});
