/**
 * `toolloop/mcp`: MCP both ways — a server's tools imported into a registry (`registerMcpTools`),
 * and a registry served as an MCP server (`createMcpServer`). `@modelcontextprotocol/sdk` (v1) is an
 * optional peer dependency, loaded only by this entry. See docs/mcp.md.
 * @packageDocumentation
 */
export { createMcpServer, type McpServerInfo, type McpServerOptions } from "./create-mcp-server.js";
export { type RegisteredMcpTools, registerMcpTools } from "./register-mcp-tools.js";
export type { McpPartsOption, RegisterMcpToolsOptions } from "./register-mcp-tools-options.js";
