export { ConfigError, loadConfigOrExit, parseConfig } from './load-config.ts';
export {
  gatewayEnvSchema,
  migrateEnvSchema,
  pairEnvSchema,
  simEnvSchema,
  workerEnvSchema,
  type BusyInputMode,
  type GatewayConfig,
  type PairConfig,
  type SimConfig,
  type WorkerConfig,
} from './schemas.ts';
export { meanings, readSchemaShape } from './meanings.ts';
export { transcribeApiKeyOf } from './transcribe-key.ts';
export { modelFallbacks, resolveModelFallbacks, type ModelFallbackEndpoint, type ModelFallbackEntry } from './model-fallbacks.ts';
export { parseMcpServers, readMcpServersFile, type McpHttpServerEntry, type McpServerEntry, type McpStdioServerEntry } from './mcp-servers.ts';
export { loadHooksFile, type HookConfig } from './hooks-file.ts';
