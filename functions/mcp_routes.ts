// POST /mcp: baton as an MCP server (Streamable HTTP, stateless), tenant-scoped behind the API key; Workers.
import { type Context, Hono } from "hono";
import { tenantSessionKey } from "../lib/api/mod.ts";
import {
  type ContextFields,
  errorText,
  jsonOrUndefined,
  log,
  readNdjson,
} from "../lib/runtime/mod.ts";
import { loadMcpSdk } from "../lib/mcp/_load_sdk.ts";
import { runId } from "../lib/openai/mod.ts";
import { FINAL_RUN_EVENTS, type InboundMessage, type RunEvent } from "../lib/session/mod.ts";
import { type App, requireApiKey } from "./_http.ts";
import { overTurnQuota } from "./_api_quota.ts";
import { runMessage, sessionStub, submitMessage } from "./session_client.ts";

type _Context = ContextFields & { session_key: string };

/**
 * The MCP endpoint. Each request gets its own server and transport (no MCP session id): any
 * Worker instance answers any request, and the state lives in the session objects. Only POST is
 * routed; GET (a server-initiated stream) and DELETE (ending an MCP session) have nothing to do.
 */
export const mcpRoutes = new Hono<App>();

mcpRoutes.post("/", requireApiKey, async (c) => {
  const body = jsonOrUndefined(new Uint8Array(await c.req.arrayBuffer()));
  if (body === undefined) {
    const error = { code: -32700, message: "Parse error: Invalid JSON" };
    return c.json({ jsonrpc: "2.0", error, id: null }, 400);
  }
  // Imported here, not at start-up: a Worker whose /mcp is never called never evaluates the SDK.
  const [{ createBatonMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise
    .all([import("../lib/mcp/baton_mcp_server.ts"), loadMcpSdk()]);
  const server = createBatonMcpServer({
    ask: (request, progress) => _ask(c, request, progress),
    history: (session) => _history(c, session),
  });
  // One JSON answer, unless a call asked for progress: then an event stream carries it.
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !_asksForProgress(body),
  });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw, { parsedBody: body });
});

/** Whether a message of the body (one, or a batch) carries a progress token. */
function _asksForProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return meta?.progressToken !== undefined;
  });
}

/** `ask`: a turn in the tenant's API session, through the same submit path as /v1/runs. */
async function _ask(
  c: Context<App>,
  request: { session?: string; message: string },
  progress: ((message: string) => void) | undefined,
): Promise<{ session: string; answer: string }> {
  const session = request.session ?? `m${crypto.randomUUID().replaceAll("-", "")}`;
  const context = _context(c.var.tenant.name, session);
  // One delivery key for the message: the outcome wait below finds the message stored here.
  const deliveryKey = `mcp:${crypto.randomUUID()}`;
  const retryAfterMs = await overTurnQuota(c, deliveryKey);
  if (retryAfterMs !== null) {
    throw new Error(
      `this API key's tenant is over API_TURNS_PER_MINUTE; retry in ${
        Math.ceil(retryAfterMs / 1000)
      } s`,
    );
  }
  const message: InboundMessage = { text: request.message, context, events: true, deliveryKey };
  const receipt = await submitMessage(c.env, context.session_key, message, true);
  const relay = progress && _relayProgress(c, context, receipt.seq, progress);
  const run = await runMessage(c.env, context.session_key, message, (seq) => {
    progress?.(
      `waiting for approval: POST /v1/runs/${runId(c.var.tenant.name, session, seq)}/approval`,
    );
  });
  await relay?.finish();
  if (run === "history_mismatch") throw new Error("the session refused the message");
  const { outcome } = run;
  if (outcome.status === "failed") throw new Error(outcome.error.message);
  return { session, answer: outcome.reply };
}

/**
 * Tells `progress` what run `seq` does (its events but the text deltas) until its final event.
 * `finish()`, once the run has ended, lets the relay pass on the events stored until then (a
 * fast turn may end before its stream opens) and ends it after `_RELAY_GRACE_MS` at most. Best
 * effort: a relay that fails only costs the client its progress.
 */
function _relayProgress(
  c: Context<App>,
  context: _Context,
  seq: number,
  progress: (message: string) => void,
): { finish(): Promise<void> } {
  let stream: ReadableStream<Uint8Array> | null = null;
  const pump = (async () => {
    try {
      stream = await sessionStub(c.env, context.session_key).runEvents(seq, context);
      if (!stream) return;
      for await (const event of readNdjson<RunEvent>(stream)) {
        if (event.type === "message.delta") continue;
        const tool = typeof event.data.tool === "string" ? ` ${event.data.tool}` : "";
        progress(`${event.type}${tool}`);
        if (FINAL_RUN_EVENTS.has(event.type)) return;
      }
    } catch (error) {
      log.warn("MCP progress relay failed", { error: errorText(error) });
    }
  })();
  return {
    async finish() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, _RELAY_GRACE_MS));
      await Promise.race([pump, grace]);
      clearTimeout(timer);
      await (stream as ReadableStream<Uint8Array> | null)?.cancel().catch(() => {});
    },
  };
}

/** How long an ended run's progress relay may still take to pass on its stored events. */
const _RELAY_GRACE_MS = 2_000;

/** `session_history`: the tenant's session's conversation; null when it has none. */
async function _history(c: Context<App>, session: string): Promise<unknown[] | null> {
  const context = _context(c.var.tenant.name, session);
  const snapshot = await sessionStub(c.env, context.session_key).snapshot(context);
  if (!snapshot) return null; // erased
  if (!snapshot.messages.length && !snapshot.running && snapshot.queued === 0) return null;
  return snapshot.messages;
}

/** The context of API session `session` of `tenant`, as the runs API builds it. */
function _context(tenant: string, session: string): _Context {
  return { platform: "api", chat_id: session, session_key: tenantSessionKey(tenant, session) };
}
