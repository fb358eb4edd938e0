export { AgentError, type AgentErrorCode } from './agent-error.ts';
export { createOpenAiRuntime, type AgentRuntime, type OpenAiRuntimeOptions, type RunTurnRequest, type RunTurnResult } from './openai-runtime.ts';
export { builtinTools, calculatorTool, createBuiltinTools, createWaitTool, currentTimeTool, defaultWaitMaxSeconds, type BuiltinToolOptions } from './tools/builtin-tools.ts';
export { defineTool, describeTool, type Tool, type ToolContext, type TurnWaitBudget } from './tools/define-tool.ts';
export { createToolRegistry, type ToolRegistry } from './tools/tool-registry.ts';
export { cancelledToolResult, type ToolCallEntry, type TranscriptEntry } from './transcript-entry.ts';
export { createSummariser, type Summariser, type SummariserOptions } from './summarise/create-summariser.ts';
export { renderTranscriptForSummary, summarySystemPrompt, type SummaryInputMessage } from './summarise/summary-prompt.ts';
