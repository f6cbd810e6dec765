// The MCP SDK imported on first use (a deployment without MCP servers or the /mcp route never evaluates it); runtime-neutral.

/** The parts of @modelcontextprotocol/sdk baton uses (lib/mcp/_sdk.ts). */
export type McpSdk = typeof import("./_sdk.ts");

let _sdk: McpSdk | null = null;
let _loading: Promise<McpSdk> | null = null;

/**
 * The SDK, imported once per isolate on the first call. Start-up pays nothing for it: the SDK
 * (with Ajv and its hundreds of zod schemas built at evaluation) is bundled as a function that
 * runs on this import.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  return _loading ??= import("./_sdk.ts").then((sdk) => _sdk = sdk, (error) => {
    _loading = null; // not remembered: the next use tries again
    throw error;
  });
}

/**
 * The SDK if it has been loaded, else null. Enough to tell the SDK's errors apart: an error can
 * only be one of its classes once something has loaded it.
 */
export function loadedMcpSdk(): McpSdk | null {
  return _sdk;
}
