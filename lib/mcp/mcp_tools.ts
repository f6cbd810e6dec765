// The tools of remote MCP servers as agent tools: listed and cached per session object, called over Streamable HTTP; runtime-neutral (fetch).
import type { CallToolResult, Client, FetchLike, jsonSchemaValidator, McpTool } from "./_sdk.ts";
import { loadedMcpSdk, loadMcpSdk } from "./_load_sdk.ts";
import { fetchOut, log } from "../runtime/mod.ts";
import type { Tool } from "../agent/mod.ts";
import { cancellingFetch } from "./_cancelling_fetch.ts";
import type { McpConfig, McpServerConfig } from "./mcp_servers.ts";

/** Largest tool result passed to the model, in characters; the rest is cut with a note. */
export const MAX_MCP_RESULT_CHARS = 100_000;

/** How long after a failed listing a server is listed again, at most (the TTL when shorter). */
const _RETRY_MS = 10_000;
/** Pages of `tools/list` read at most: a server paging forever cannot hold a turn. */
const _MAX_PAGES = 20;

/**
 * The client's validator of tools' `outputSchema`s: accepts everything. The SDK's default (Ajv)
 * compiles schemas to code, which Workers forbid; the model reads a result either way.
 */
const _acceptAll: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({
    valid: true,
    data: input as never,
    errorMessage: undefined,
  }),
};

interface _Server {
  config: McpServerConfig;
  /** The connected client, shared by listings and calls; dropped when its connection fails. */
  client: Promise<Client> | null;
  /** The tools last listed (as offered), or null before a listing succeeded. */
  tools: Tool[] | null;
  listedAt: number;
  /** Set by `notifications/tools/list_changed`: listed again before the TTL runs out. */
  changed: boolean;
  failedAt: number | null;
  listing: Promise<void> | null;
}

/**
 * The tools of `MCP_SERVERS`, one instance per session object: each server's tool list is kept
 * and reused by the following turns, so a turn pays no listing round trip once its server is
 * known. A list older than the TTL, or announced changed, is listed again in the background while
 * the cached one serves. A server never listed is listed when a turn starts (within the timeout);
 * one that failed is tried again after a while, its tools absent meanwhile. Calls carry the turn's
 * signal and the timeout; a server that fails, answers an error or is too slow gives the model
 * an error to read.
 */
export class McpToolbox {
  readonly #servers: _Server[];
  readonly #timeoutMs: number;
  readonly #ttlMs: number;
  readonly #fetch: FetchLike;
  readonly #now: () => number;

  constructor(
    config: Pick<McpConfig, "servers" | "timeoutMs" | "toolsTtlMs">,
    options: { fetch?: FetchLike; now?: () => number } = {},
  ) {
    this.#servers = config.servers.map((server) => ({
      config: server,
      client: null,
      tools: null,
      listedAt: 0,
      changed: false,
      failedAt: null,
      listing: null,
    }));
    this.#timeoutMs = config.timeoutMs;
    this.#ttlMs = config.toolsTtlMs;
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.#now = options.now ?? Date.now;
  }

  /** Whether any server is configured. */
  get size(): number {
    return this.#servers.length;
  }

  /**
   * The tools to offer this turn, server by server. Waits only for servers due a first listing
   * (or a retry after a failure), each within the timeout; rejects only when `signal` aborts.
   */
  async tools(signal: AbortSignal): Promise<Tool[]> {
    const now = this.#now();
    const waits: Promise<void>[] = [];
    for (const server of this.#servers) {
      if (server.tools === null) {
        const retryMs = Math.min(_RETRY_MS, this.#ttlMs);
        if (server.failedAt === null || now - server.failedAt >= retryMs) {
          waits.push(this.#list(server));
        }
      } else if (server.changed || now - server.listedAt >= this.#ttlMs) {
        // The cached list serves this turn; the next one gets the new list.
        void this.#list(server);
      }
    }
    if (waits.length) await _raceAbort(Promise.all(waits), signal);
    signal.throwIfAborted();
    return this.#servers.flatMap((server) => server.tools ?? []);
  }

  /** Closes every connection (the session object is going away; tests). */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) => this.#drop(server)));
  }

  /** Lists `server`'s tools once at a time; never rejects (a failure is logged and remembered). */
  #list(server: _Server): Promise<void> {
    return server.listing ??= this.#listNow(server).finally(() => server.listing = null);
  }

  async #listNow(server: _Server): Promise<void> {
    const { name } = server.config;
    server.changed = false;
    for (let attempt = 1;; attempt++) {
      try {
        const client = await this.#client(server);
        const listed: McpTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < _MAX_PAGES; page++) {
          const result = await client.listTools(cursor ? { cursor } : {}, {
            timeout: this.#timeoutMs,
          });
          listed.push(...result.tools);
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        server.tools = this.#offered(server, listed);
        server.listedAt = this.#now();
        server.failedAt = null;
        log.debug("MCP tools listed", { server: name, tools: server.tools.length });
        return;
      } catch (error) {
        await this.#drop(server);
        // A listing changes nothing, so a transport failure (a pooled connection the server had
        // closed: "Network connection lost") is tried once more on a fresh connection. The SDK's
        // own errors — a timeout, an error the server answered — are final.
        if (attempt === 1 && !_isMcpError(error)) continue;
        server.failedAt = this.#now();
        log.warn("MCP server not listed", { server: name, error: _reason(error, this.#timeoutMs) });
        return;
      }
    }
  }

  /** The listed tools as agent tools: filtered by `tools`, named `<server>__<tool>`, asking per `approval`. */
  #offered(server: _Server, listed: McpTool[]): Tool[] {
    const { name, tools: only, approval } = server.config;
    const offered: Tool[] = [];
    for (const tool of listed) {
      if (only && !only.has(tool.name)) continue;
      const full = `${name}__${tool.name}`;
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(full)) {
        log.warn("MCP tool skipped: its name is not usable", { server: name, tool: tool.name });
        continue;
      }
      const asks = approval === true || (approval !== null && approval.has(tool.name));
      offered.push({
        name: full,
        description: tool.description ?? tool.title ?? tool.name,
        parameters: tool.inputSchema as Record<string, unknown>,
        ...(asks ? { approval: "always" as const } : {}),
        run: (args, { signal }) => this.#call(server, tool.name, args, signal),
      });
    }
    return offered;
  }

  /** Calls one tool; its result as text for the model, or an error the model reads. */
  async #call(
    server: _Server,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string> {
    const { name } = server.config;
    let result: CallToolResult;
    try {
      const client = await _raceAbort(this.#client(server), signal);
      result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.#timeoutMs,
      }) as CallToolResult;
    } catch (error) {
      signal.throwIfAborted();
      // The SDK's own errors (a timeout, an error the server answered) leave the connection
      // usable; anything else (HTTP status, network) drops it, so the next call reconnects.
      const sdk = loadedMcpSdk();
      const kept = sdk !== null && error instanceof sdk.McpError &&
        error.code !== sdk.ErrorCode.ConnectionClosed;
      if (!kept) await this.#drop(server);
      const reason = _reason(error, this.#timeoutMs);
      log.warn("MCP call failed", { server: name, tool, error: reason });
      throw new Error(`MCP server ${name}: ${reason}`);
    }
    const text = resultText(result);
    if (result.isError) throw new Error(text || `MCP server ${name}: the tool failed`);
    return text;
  }

  /** The server's connected client, connecting once (within the timeout) when there is none. */
  #client(server: _Server): Promise<Client> {
    if (server.client) return server.client;
    const connecting = this.#connect(server);
    server.client = connecting;
    connecting.catch(() => {
      if (server.client === connecting) server.client = null;
    });
    return connecting;
  }

  async #connect(server: _Server): Promise<Client> {
    const { url, headers } = server.config;
    const sdk = await loadMcpSdk();
    // Out through the one HTTP helper: a lost connection names the server alone (never the URL or
    // a header's secret). No deadline there: the SDK times each request, and a stream stays open.
    const out: FetchLike = (target, init) =>
      fetchOut(target, init ?? {}, {
        api: "MCP server",
        secrets: Object.values(headers),
        timeoutMs: null,
        fetch: this.#fetch,
      });
    const client = new sdk.Client(
      { name: "baton", version: "0.1.0" },
      { capabilities: {}, jsonSchemaValidator: _acceptAll },
    );
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      server.changed = true;
    });
    // A failure of the background stream is not a failed call; a call's own failure is seen there.
    client.onerror = () => {};
    const transport = new sdk.StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
      fetch: cancellingFetch(out),
    });
    try {
      await client.connect(transport, { timeout: this.#timeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return client;
  }

  /** Forgets the server's connection (closing it): the next use connects again. */
  async #drop(server: _Server): Promise<void> {
    const client = server.client;
    server.client = null;
    if (!client) return;
    try {
      await (await client).close();
    } catch {
      // Never connected, or already gone: nothing to close.
    }
  }
}

/**
 * A tool result as the model reads it: the text parts joined; other parts (images, resources) as
 * JSON; structured content when there is no text. Cut at `MAX_MCP_RESULT_CHARS`.
 */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) =>
    part.type === "text" ? part.text : JSON.stringify(_summary(part))
  );
  let text = parts.join("\n");
  if (!text && result.structuredContent !== undefined) {
    text = JSON.stringify(result.structuredContent);
  }
  if (text.length <= MAX_MCP_RESULT_CHARS) return text;
  return `${text.slice(0, MAX_MCP_RESULT_CHARS)}\n[cut: ${text.length} characters in all]`;
}

/** A non-text part without its payload (an image's bytes would only fill the model's context). */
function _summary(part: CallToolResult["content"][number]): Record<string, unknown> {
  if (part.type === "image" || part.type === "audio") {
    return { type: part.type, mimeType: part.mimeType };
  }
  return part as Record<string, unknown>;
}

/**
 * Why a call failed, for the model and the log: short, no stack, and for an HTTP status only the
 * status (the SDK's message carries the answer's body, which a server may fill with anything).
 */
function _reason(error: unknown, timeoutMs: number): string {
  const sdk = loadedMcpSdk();
  if (sdk && error instanceof sdk.McpError && error.code === sdk.ErrorCode.RequestTimeout) {
    return `no answer within ${timeoutMs} ms`;
  }
  if (sdk && error instanceof sdk.StreamableHTTPError && error.code !== undefined) {
    return `HTTP ${error.code} from the server`;
  }
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** Whether `error` is the SDK's own (a timeout, an error the server answered), not the transport's. */
function _isMcpError(error: unknown): boolean {
  const sdk = loadedMcpSdk();
  return sdk !== null && error instanceof sdk.McpError;
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise goes on, unobserved). */
function _raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
