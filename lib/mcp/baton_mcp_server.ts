// baton as an MCP server: the tools `ask` and `session_history` over callbacks the host supplies; runtime-neutral.
import * as z from "zod";
import { sessionIdField } from "../openai/mod.ts";
import { type jsonSchemaValidator, McpServer } from "./_sdk.ts";

/** What the host does for the tools; each runs in the tenant of the request. */
export interface BatonMcpHandlers {
  /**
   * Runs a turn in API session `session` (a new one when absent) and returns its answer;
   * `progress`, when the client asked for progress, is told what the run does while it runs.
   * Throwing: an error the client reads.
   */
  ask(
    request: { session?: string; message: string },
    progress: ((message: string) => void) | undefined,
    signal: AbortSignal,
  ): Promise<{ session: string; answer: string }>;
  /** The session's conversation, or null when the tenant has no such session. */
  history(session: string): Promise<unknown[] | null>;
}

/** The server's validator of elicitation schemas (never used): accepts all, as Workers forbid Ajv's code generation. */
const _acceptAll: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({
    valid: true,
    data: input as never,
    errorMessage: undefined,
  }),
};

/**
 * A new MCP server with baton's tools, for one request (stateless: any instance answers any
 * request). Progress notifications go to clients that asked with a progress token.
 */
export function createBatonMcpServer(handlers: BatonMcpHandlers): McpServer {
  const server = new McpServer(
    { name: "baton", version: "0.1.0" },
    { jsonSchemaValidator: _acceptAll },
  );
  server.registerTool("ask", {
    description: "Sends a message to a baton agent session and returns the agent's answer. " +
      "Without `session`, a new session is started; the answer names it, to continue there.",
    inputSchema: {
      message: z.string().min(1).max(100_000).describe("What to ask or tell the agent."),
      session: sessionIdField.optional().describe("The session to continue (an API session id)."),
    },
    outputSchema: { session: z.string(), answer: z.string() },
  }, async ({ message, session }, extra) => {
    const token = extra._meta?.progressToken;
    let step = 0;
    const progress = token === undefined ? undefined : (text: string) => {
      step++;
      extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: step, message: text },
      }).catch(() => {}); // a client gone mid-turn misses its progress, nothing else
    };
    try {
      const result = await handlers.ask(
        { message, ...(session ? { session } : {}) },
        progress,
        extra.signal,
      );
      return {
        content: [{ type: "text", text: result.answer }],
        structuredContent: result,
      };
    } catch (error) {
      return _toolError(error);
    }
  });
  server.registerTool("session_history", {
    description: "Returns the conversation of a baton API session (this key's own sessions).",
    inputSchema: { session: sessionIdField.describe("The API session id.") },
  }, async ({ session }) => {
    try {
      const messages = await handlers.history(session);
      if (messages === null) return _toolError(new Error(`no such session: ${session}`));
      return { content: [{ type: "text", text: JSON.stringify({ session, messages }) }] };
    } catch (error) {
      return _toolError(error);
    }
  });
  return server;
}

function _toolError(error: unknown) {
  const text = error instanceof Error ? error.message : "the request failed";
  return { isError: true, content: [{ type: "text" as const, text }] };
}
