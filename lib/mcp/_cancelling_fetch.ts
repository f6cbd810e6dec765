// A fetch for the MCP client transport that ends a request's HTTP exchange once its cancellation is sent; any runtime with fetch.
import type { FetchLike } from "./_sdk.ts";

/**
 * Wraps `base` so that a JSON-RPC request whose `notifications/cancelled` has been delivered also
 * has its own POST aborted. The SDK's client, on a timeout or an aborted signal, only sends the
 * notification: a server that hangs would otherwise keep that response (often an SSE stream) open
 * for as long as the connection lives. The request's exchange is forgotten when its body ends.
 */
export function cancellingFetch(base: FetchLike = fetch): FetchLike {
  const open = new Map<string | number, AbortController>();
  return async (url, init) => {
    const message = _message(init?.body);
    if (message?.method === "notifications/cancelled") {
      const response = await base(url, init);
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) {
        open.get(id)?.abort(new Error("the request was cancelled"));
        open.delete(id);
      }
      return response;
    }
    if (message?.id === undefined || message.method === undefined) return base(url, init);
    const id = message.id;
    const controller = new AbortController();
    open.set(id, controller);
    const signal = init?.signal
      ? AbortSignal.any([init.signal, controller.signal])
      : controller.signal;
    let response: Response;
    try {
      response = await base(url, { ...init, signal });
    } catch (error) {
      open.delete(id);
      throw error;
    }
    if (!response.body) {
      open.delete(id);
      return response;
    }
    const body = response.body.pipeThrough(
      new TransformStream({ flush: () => void open.delete(id) }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The one JSON-RPC message a POST body carries, or null (a batch, a GET, anything else). */
function _message(
  body: unknown,
): { id?: string | number; method?: string; params?: unknown } | null {
  if (typeof body !== "string") return null;
  try {
    const parsed = JSON.parse(body);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}
