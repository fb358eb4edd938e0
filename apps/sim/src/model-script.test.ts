import { describe, expect, it } from 'vitest';
import { ModelScriptRunner } from './model-script.ts';

const user = (content: string) => ({ role: 'user', content });

describe(ModelScriptRunner.name, () => {
  describe('plan', () => {
    it('answers a tool result with {{tool_result}} filled in from the last tool message', () => {
      const runner = new ModelScriptRunner();
      runner.replace({
        rules: [
          { match: 'time', firstStep: true, toolCalls: [{ name: 'current_time' }] },
          { match: 'time', reply: 'It is {{tool_result}} (UTC).' },
        ],
      });
      for (const round of [1, 2]) {
        const first = runner.plan([user(`what time is it? (${round})`)]);
        expect(first.toolCalls.map((call) => call.name)).toEqual(['current_time']);
        const call = first.toolCalls[0];
        const followUp = runner.plan([
          user(`what time is it? (${round})`),
          { role: 'assistant', content: null, tool_calls: [{ id: call?.id, type: 'function', function: { name: 'current_time', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: call?.id, content: '2026-11-24T05:00:00.000Z' },
        ]);
        expect(followUp).toMatchObject({ kind: 'reply', content: 'It is 2026-11-24T05:00:00.000Z (UTC).', toolCalls: [] });
      }
    });

    it('leaves a reply without the placeholder as it is, and fills an empty string when there is no tool message', () => {
      const runner = new ModelScriptRunner();
      runner.replace({ rules: [{ match: 'plain', reply: 'just {text}' }, { reply: 'result: [{{tool_result}}]' }] });
      expect(runner.plan([user('plain')]).content).toBe('just {text}');
      expect(runner.plan([user('other')]).content).toBe('result: []');
    });
  });
});
