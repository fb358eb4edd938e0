export { AgentError, type AgentErrorCode } from './agent-error.ts';
export type {
  AgentRuntime,
  ApprovalAnswer,
  ApprovalQuestion,
  AskUser,
  InputImage,
  RunTurnRequest,
  RunTurnResult,
  RuntimeIds,
  SteerInput,
  Summariser,
  TurnFailure,
} from './agent-runtime.ts';
export { createFallbackRuntime, type FallbackRuntime, type FallbackRuntimeOptions, type ModelEndpoint } from './openai/fallback-runtime.ts';
export { createOpenAiRuntime, type OpenAiRuntimeOptions } from './openai/openai-runtime.ts';
export { createTranscriber, type Transcriber, type TranscriberOptions } from './openai/transcribe-audio.ts';
export { createSummariser, type SummariserOptions } from './openai/openai-summariser.ts';
export { builtinTools, calculatorTool, createBuiltinTools, createWaitTool, currentTimeTool, defaultWaitMaxSeconds, type BuiltinToolOptions } from './tools/builtin-tools.ts';
export { defineTool, describeTool, type Tool, type ToolCaller, type ToolContext, type ToolDefinition, type TurnWaitBudget } from './tools/define-tool.ts';
export { createToolRegistry, type ToolRegistry, type ToolSource } from './tools/tool-registry.ts';
export { createMcpToolSource, type McpToolSource, type McpToolSourceOptions } from './mcp/mcp-tool-source.ts';
export { defaultMcpLimits, McpCallError, type McpCallErrorCode, type McpLimits, type McpServerSpec } from './mcp/mcp-options.ts';
export { buildMcpChildEnv, createMcpServerLink, type McpServerLink, type McpServerLinkOptions } from './mcp/mcp-server-link.ts';
export { cutToolResult, isOfferedMcpTool, mcpToolName, renderMcpResult } from './mcp/mcp-tool-results.ts';
export { cancelledToolResult, type ToolCallEntry, type TranscriptEntry } from './transcript-entry.ts';
export { renderTranscriptForSummary, summarySystemPrompt, type SummaryInputMessage } from './summarise/summary-prompt.ts';
export { createCodexPool } from './codex/codex-pool.ts';
export { splitCommandLine } from './codex/split-command.ts';
export type { ChildEnvOutcome, CodexConversationOptions, CodexPool, CodexPoolOptions } from './codex/codex-options.ts';
export { buildCodexChildEnv, pickAllowedEnv, readProviderKeyName } from './codex/codex-child-env.ts';
export { conversationUid } from './codex/codex-sandbox-user.ts';
export { startCodexNetProxy, type CodexNetProxy } from './codex/codex-net-proxy.ts';
export { readProviderHosts, type NetDestination, type ProviderHosts } from './codex/codex-provider-hosts.ts';
export { checkCodexSandbox, findExecutable, wrapCodexCommand, type CodexSandboxSettings, type SandboxCheck, type SandboxedDirs } from './codex/codex-sandbox.ts';
export { estimateMessageTokens, estimateMessageTokensPaced } from './estimate-tokens.ts';
export { createScheduleTool, type BookedSchedule, type BookingResult, type ScheduleBook } from './tools/schedule-tool.ts';
