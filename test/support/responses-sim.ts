import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for a model provider's Responses API (`POST /v1/responses`, streamed as server-sent events), just
// enough for the real `codex app-server` to run a turn (test/e2e/codex-real.e2e.test.ts). Scripted by the last
// input item: the user's `exec: <cmd>` → an `exec_command` call (Codex runs it and sends its output back); a call's
// output → the message `ran: <output>`; any other user text → `echo: <text>`.

interface InputItem {
  type?: string;
  role?: string;
  output?: unknown;
  content?: { text?: string }[];
}

export interface ResponsesSim {
  /** The base URL a provider's `base_url` names (…/v1). */
  url: string;
  /** Every request body received, oldest first. */
  requests: { input?: InputItem[] }[];
  close(): Promise<void>;
}

/** The one output item of the answer to `last`. */
function answerTo(last: InputItem | undefined): Record<string, unknown> {
  if (last?.type === 'function_call_output') {
    const output = typeof last.output === 'string' ? last.output : JSON.stringify(last.output);
    return { type: 'message', role: 'assistant', id: 'msg_ran', content: [{ type: 'output_text', text: `ran: ${output}` }] };
  }
  const text = last?.content?.[0]?.text ?? '';
  if (text.startsWith('exec: ')) return { type: 'function_call', id: 'fc_1', call_id: `call_${Date.now()}`, name: 'exec_command', arguments: JSON.stringify({ cmd: text.slice(6) }) };
  return { type: 'message', role: 'assistant', id: 'msg_echo', content: [{ type: 'output_text', text: `echo: ${text}` }] };
}

export async function startResponsesSim(): Promise<ResponsesSim> {
  const requests: ResponsesSim['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { input?: InputItem[] };
      requests.push(body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('response.created', { response: { id: 'resp_sim' } });
      send('response.output_item.done', { item: answerTo(body.input?.at(-1)), output_index: 0 });
      const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
      send('response.completed', { response: { id: 'resp_sim', usage } });
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
