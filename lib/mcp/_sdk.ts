// The parts of @modelcontextprotocol/sdk baton uses, imported in one place; any runtime (web standards).
//
// The SDK's `./*` export maps `x.js` to types at `x.js.d.ts`, which do not exist: tsc finds
// `x.d.ts` anyway, Deno does not. Each `@ts-types` names the types Deno should use; the code
// imported is the same for esbuild, Deno and tsc.

export { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
export { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
export type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/validation/types"
export type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
// @ts-types="@modelcontextprotocol/sdk/types"
export {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
