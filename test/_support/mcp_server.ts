// A real MCP server (the official SDK, Streamable HTTP, sessions) on loopback for tests, with switches to fail; Deno.
import { z } from "zod";
import { McpServer, WebStandardStreamableHTTPServerTransport } from "../../lib/mcp/_sdk.ts";

/** What the test server saw and how it should misbehave. */
export interface TestMcpServer {
  /** e.g. "http://127.0.0.1:PORT/mcp". */
  url: string;
  port: number;
  /** JSON-RPC methods received, in order (requests and notifications). */
  methods: string[];
  /** Arguments of each `tools/call`, in order, with the tool's name. */
  calls: { name: string; arguments: Record<string, unknown> }[];
  /** Calls of `wait` whose handler saw its request cancelled (`notifications/cancelled`). */
  cancelled: number;
  /** Calls of `stuck` whose HTTP exchange the client ended. */
  disconnected: number;
  /** Every `tools/call` is answered with HTTP 500. */
  failCalls: boolean;
  /** Headers of the last request. */
  lastHeaders: Headers | null;
  /** Resolves once `methods` holds `n` entries of `method`. */
  waitFor(method: string, n?: number): Promise<void>;
  /** Adds a tool `extra_<n>` and tells the connected clients the list changed. */
  addTool(name: string): void;
  /** Stops listening (connections are cut). */
  close(): Promise<void>;
}

/**
 * Starts the server on `port` (0: any free one). Tools: `echo {text}` (answers the text),
 * `add {a, b}` (the sum, as text and structured content), `fail` (a tool error), `wait`
 * (answers only when its request is cancelled, counting it in `cancelled`), `stuck` (never answers).
 */
export function startMcpServer(port = 0): Promise<TestMcpServer> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  const waiters: (() => void)[] = [];
  const seen = (): void => waiters.splice(0).forEach((wake) => wake());

  const state: TestMcpServer = {
    url: "",
    port: 0,
    methods: [],
    calls: [],
    cancelled: 0,
    disconnected: 0,
    failCalls: false,
    lastHeaders: null,
    async waitFor(method, n = 1) {
      const deadline = Date.now() + 10_000;
      while (state.methods.filter((m) => m === method).length < n) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${n}× ${method}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    addTool(name) {
      for (const server of servers) {
        server.registerTool(name, { description: `added: ${name}`, inputSchema: {} }, () => ({
          content: [{ type: "text", text: name }],
        }));
      }
    },
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      await http.shutdown();
    },
  };

  const build = (): McpServer => {
    const server = new McpServer({ name: "test-mcp", version: "1.0.0" });
    server.registerTool("echo", {
      description: "Echoes the text.",
      inputSchema: { text: z.string().describe("What to echo.") },
    }, ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }));
    server.registerTool("add", {
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
    }, ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
      structuredContent: { sum: a + b },
    }));
    server.registerTool("fail", { description: "Always fails.", inputSchema: {} }, () => ({
      isError: true,
      content: [{ type: "text", text: "the tool broke" }],
    }));
    server.registerTool(
      "wait",
      { description: "Never answers.", inputSchema: {} },
      (_args, extra) =>
        new Promise((resolve) => {
          extra.signal.addEventListener("abort", () => {
            state.cancelled++;
            seen();
            resolve({ content: [{ type: "text", text: "cancelled" }] });
          });
        }),
    );
    server.registerTool("stuck", {
      description: "Never answers, not even when cancelled.",
      inputSchema: {},
    }, () => new Promise(() => {}));
    servers.add(server);
    return server;
  };

  const handle = async (request: Request): Promise<Response> => {
    state.lastHeaders = request.headers;
    const body = request.method === "POST" ? await request.clone().json().catch(() => null) : null;
    const messages = Array.isArray(body) ? body : body ? [body] : [];
    for (const message of messages) {
      if (typeof message?.method === "string") state.methods.push(message.method);
      if (message?.method === "tools/call") {
        state.calls.push({ name: message.params.name, arguments: message.params.arguments ?? {} });
      }
    }
    seen();
    const isCall = messages.some((m) => m?.method === "tools/call");
    if (isCall && state.failCalls) return new Response("broken", { status: 500 });
    if (messages.some((m) => m?.method === "tools/call" && m.params?.name === "stuck")) {
      // Its response never completes, so the request's signal aborts only when the client goes.
      request.signal.addEventListener("abort", () => {
        state.disconnected++;
        seen();
      });
    }
    const id = request.headers.get("mcp-session-id");
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) return new Response("no such session", { status: 404 });
      transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, transport!),
      });
      await build().connect(transport);
    }
    return transport.handleRequest(request, body === null ? undefined : { parsedBody: body });
  };

  let http!: Deno.HttpServer;
  return new Promise((resolve) => {
    http = Deno.serve({
      port,
      hostname: "127.0.0.1",
      onListen: (addr) => {
        state.port = addr.port;
        state.url = `http://127.0.0.1:${addr.port}/mcp`;
        resolve(state);
      },
    }, handle);
  });
}
