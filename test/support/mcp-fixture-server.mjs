#!/usr/bin/env node
// An MCP server over stdio, built on the SDK's own Server, for what no server
// from npm does on demand: exit in the middle of a call, hang, answer with a
// very large result, change its tool list. The everyday paths are tested
// against @modelcontextprotocol/server-everything instead.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const readOnly = { readOnlyHint: true, destructiveHint: false };
const object = { type: 'object', properties: {} };
const tools = [
  { name: 'crash', description: 'Exits the server process in the middle of the call.', inputSchema: object, annotations: readOnly },
  { name: 'hang', description: 'Never answers.', inputSchema: object, annotations: readOnly },
  { name: 'big', description: 'Answers with `size` characters.', inputSchema: { type: 'object', properties: { size: { type: 'number' } } }, annotations: readOnly },
  { name: 'pid', description: 'Answers with the server process id.', inputSchema: object, annotations: readOnly },
  { name: 'grow', description: 'Adds the tool `later` and says the list changed.', inputSchema: object, annotations: readOnly },
  { name: 'write', description: 'Claims nothing about side effects.', inputSchema: object },
  { name: 'wipe', description: 'Says it is destructive.', inputSchema: object, annotations: { readOnlyHint: true, destructiveHint: true } },
];
let grown = false;

const server = new Server({ name: 'switchboard-fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: grown ? [...tools, { name: 'later', description: 'Added by grow.', inputSchema: object, annotations: readOnly }] : tools,
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });
  switch (request.params.name) {
    case 'crash':
      setImmediate(() => process.exit(3));
      return new Promise(() => undefined);
    case 'hang':
      return new Promise(() => undefined);
    case 'big':
      return text('x'.repeat(Number(request.params.arguments?.size ?? 100_000)));
    case 'pid':
      return text(process.pid);
    case 'grow':
      grown = true;
      await server.sendToolListChanged();
      return text('grown');
    default:
      return text(`ran ${request.params.name}`);
  }
});
await server.connect(new StdioServerTransport());
