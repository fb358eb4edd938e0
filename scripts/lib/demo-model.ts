/**
 * The demo's model: the simulator's scripted model, scripted to show what an
 * agent gateway does (a tool call, a streamed long answer, a short reply), or
 * a real OpenAI-compatible model when MODEL_BASE_URL and MODEL_API_KEY are set.
 */

export interface DemoModel {
  /** Env for the worker. */
  workerEnv: Record<string, string>;
  /** One line for the terminal: which model answers. */
  description: string;
  /** The simulator's model script (apps/sim/README.md, "Model script"); undefined for a real model. */
  simScript?: unknown;
}

export const realModelDefaultName = 'gpt-4o-mini';

const longStory = [
  'Once, a message left a phone in a hurry. The gateway caught it at the door, wrote it down in Postgres before saying "got it",',
  'and only then put a note on the queue. A worker picked the note up, took the conversation\'s lease so no other worker would',
  'answer at the same time, read the history, and asked the model. The model, which is me, began to talk, and my words went',
  'back to the worker in small pieces, as a stream. While I streamed, the worker kept the turn\'s place: had you written',
  'again, it would have stopped me and started a new turn with both of your messages. When I finished, the worker committed',
  'my answer to the transcript and to the outbox in one transaction, and a delivery job sent it to your chat, retrying politely',
  'if the platform asked it to slow down. Had a process restarted halfway, the turn would have resumed, not been lost or sent',
  'twice. And that, in a few hundred words, is the life of one turn in Switchboard. The end.',
].join(' ');

/** The scripted demo model: rules in order, the first that fits the last user message answers. */
export const demoModelScript = {
  default: {
    type: 'fixed',
    text: 'Hello! I am the demo model behind Switchboard, which keeps this chat\'s history and gives me one turn at a time. Ask me "what time is it?" and I call the current_time tool, or ask for a long story and I stream a longer answer.',
  },
  rules: [
    // A long answer in 16-character chunks, 20 ms apart: a few seconds of streaming.
    { matchRegex: '[Ll]ong|[Ss]tor(y|ies)', reply: longStory, chunkDelayMs: 20 },
    // The turn's first request calls the tool; the follow-up, which carries the tool's result, answers with it.
    { matchRegex: '[Tt]ime|[Cc]lock', firstStep: true, toolCalls: [{ name: 'current_time', arguments: {} }] },
    { matchRegex: '[Tt]ime|[Cc]lock', reply: 'I asked the current_time tool: it is {{tool_result}} (UTC).' },
  ],
};

/** The sim's model unless both MODEL_BASE_URL and MODEL_API_KEY are set in `env`. */
export function chooseDemoModel(env: NodeJS.ProcessEnv, simUrl: string): DemoModel {
  const baseUrl = env.MODEL_BASE_URL?.trim();
  const apiKey = env.MODEL_API_KEY?.trim();
  if (baseUrl && apiKey) {
    const name = env.MODEL_NAME?.trim() || realModelDefaultName;
    const named = env.MODEL_NAME?.trim() ? '' : ' (MODEL_NAME is unset; set it to choose another)';
    return { workerEnv: { MODEL_BASE_URL: baseUrl, MODEL_API_KEY: apiKey, MODEL_NAME: name }, description: `${name} at ${describeHost(baseUrl)}${named}` };
  }
  const hint = baseUrl || apiKey ? ' (set both MODEL_BASE_URL and MODEL_API_KEY to use a real model)' : '';
  return {
    workerEnv: { MODEL_BASE_URL: `${simUrl}/v1`, MODEL_API_KEY: 'switchboard-sim', MODEL_NAME: 'switchboard-sim' },
    description: `the simulator's scripted model${hint}: ask it the time, or for a long story`,
    simScript: demoModelScript,
  };
}

/** Scheme, host and path: never credentials a URL may carry. */
function describeHost(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'MODEL_BASE_URL';
  }
}
