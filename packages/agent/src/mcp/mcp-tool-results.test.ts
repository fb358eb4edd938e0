import { describe, expect, it } from 'vitest';
import { cutToolResult, isOfferedMcpTool, mcpToolAsks, mcpToolName, renderMcpResult } from './mcp-tool-results.ts';

describe(mcpToolName.name, () => {
  it('joins server and tool with __, and refuses what the model API would', () => {
    expect(mcpToolName('everything', 'get-env')).toBe('everything__get-env');
    expect(mcpToolName('files', 'read file')).toBeNull();
    expect(mcpToolName('files', 'lire_fichier_é')).toBeNull();
    expect(mcpToolName('s', 't'.repeat(61))).toBe(`s__${'t'.repeat(61)}`);
    expect(mcpToolName('s', 't'.repeat(62))).toBeNull();
  });
});

describe(mcpToolAsks.name, () => {
  it('asks for every call of a tool that does not say it is read-only and not destructive (fail closed)', () => {
    expect(mcpToolAsks({ readOnlyHint: true })).toBe(false);
    expect(mcpToolAsks({ readOnlyHint: true, destructiveHint: true })).toBe(true);
    expect(mcpToolAsks({ readOnlyHint: false })).toBe(true);
    expect(mcpToolAsks(undefined)).toBe(true);
  });
});

describe(isOfferedMcpTool.name, () => {
  it('runs unasked only what says it is read-only and not destructive (fail closed)', () => {
    expect(isOfferedMcpTool({ readOnlyHint: true })).toBe(true);
    expect(isOfferedMcpTool({ readOnlyHint: true, destructiveHint: false })).toBe(true);
    expect(isOfferedMcpTool({ readOnlyHint: true, destructiveHint: true })).toBe(false);
    expect(isOfferedMcpTool({ readOnlyHint: false })).toBe(false);
    expect(isOfferedMcpTool({ destructiveHint: false })).toBe(false);
    expect(isOfferedMcpTool(undefined)).toBe(false);
  });
});

describe(renderMcpResult.name, () => {
  it('shows text, names what it does not show, and marks errors', () => {
    expect(renderMcpResult({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toBe('a\nb');
    expect(renderMcpResult({ content: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] })).toBe('[image: image/png, 3 bytes, not shown]');
    expect(renderMcpResult({ content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'inside' } }, { type: 'resource_link', uri: 'file:///b' }] })).toBe('inside\n[resource link: file:///b]');
    expect(renderMcpResult({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
    expect(renderMcpResult({ content: [{ type: 'text', text: 'no such file' }], isError: true })).toBe('error: no such file');
    expect(renderMcpResult({ isError: true })).toBe('error: the tool reported an error');
  });
});

describe(cutToolResult.name, () => {
  it('keeps a short result and cuts a long one with a note, never inside a surrogate pair', () => {
    expect(cutToolResult('abc', 3)).toBe('abc');
    expect(cutToolResult('abcdef', 3)).toBe('abc\n[cut: the tool returned 6 characters; only the first 3 are shown]');
    expect(cutToolResult('ab😀cd', 3)).toBe('ab\n[cut: the tool returned 6 characters; only the first 2 are shown]');
  });
});
