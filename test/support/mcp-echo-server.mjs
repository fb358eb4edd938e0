#!/usr/bin/env node
// The smallest MCP server over stdio, on the SDK's own Server: one read-only
// tool, `echo`, for the randomized scenario test (turn-mcp.ts), so MCP calls
// run under its kills and stalls while its schema adds little to each request.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const echo = {
  name: 'echo',
  description: 'Echoes text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: true, destructiveHint: false },
};
const server = new Server({ name: 'switchboard-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [echo] }));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `echoed: ${String(request.params.arguments?.text ?? '')}` }] }));
await server.connect(new StdioServerTransport());
