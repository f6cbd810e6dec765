// Relays a run's events from its session object to an HTTP client as SSE; Workers.
import { FINAL_RUN_EVENTS, type RunEvent } from "../lib/session/mod.ts";
import {
  type ContextFields,
  errorText,
  log,
  readNdjson,
  type SseEvent,
  sseTransport,
} from "../lib/runtime/mod.ts";
import type { Env } from "./env.ts";
import { sessionStub } from "./session_client.ts";
import type { StreamSlot } from "./_tenant_caps.ts";

/**
 * Opens run `seq`'s event stream (stored events first, then live ones) and relays it as SSE,
 * `translate` mapping each event to the frames to send, with a keep-alive comment every
 * `keepAliveMs` (a turn waiting for approval may send nothing for minutes). The stream ends after the final event;
 * a client that goes away is dropped without touching the run. Null when there is no such run.
 * `slot` (the tenant's stream slot the request took) is released when the stream ends, when a
 * keep-alive finds the client gone or its stream unread for a whole interval, or at once when
 * there is no stream.
 */
export async function relayRunEvents(
  env: Env,
  context: ContextFields,
  seq: number,
  translate: (event: RunEvent) => SseEvent[] | Promise<SseEvent[]>,
  headers: Record<string, string>,
  keepAliveMs = 15_000,
  slot?: StreamSlot,
): Promise<Response | null> {
  let upstream: ReadableStream<Uint8Array> | null;
  try {
    upstream = await sessionStub(env, context.session_key ?? "").runEvents(seq, context);
  } finally {
    if (!upstream!) slot?.release();
  }
  return upstream ? relayEventStream(upstream, translate, headers, keepAliveMs, slot) : null;
}

/**
 * `relayRunEvents` over a run's event stream the caller already holds (`upstream`, newline-
 * delimited JSON from the session object: `submitAndSubscribe` opens it with the turn's submit).
 */
export function relayEventStream(
  upstream: ReadableStream<Uint8Array>,
  translate: (event: RunEvent) => SseEvent[] | Promise<SseEvent[]>,
  headers: Record<string, string>,
  keepAliveMs = 15_000,
  slot?: StreamSlot,
): Response {
  const sse = sseTransport();
  sse.write({ comment: "stream open" });
  // A client that left is seen here first when the run is quiet: its slot is free at once. So is
  // one whose stream has not been read for a whole interval: workerd may drop the response of a
  // client that left without cancelling its stream, and the writes then never fail (in local
  // workerd about one run in twenty of tenant_caps_test kept the slot until its turn ended).
  const keepAlive = setInterval(() => {
    const waiting = sse.waitingSince();
    const unread = waiting !== null && Date.now() - waiting >= keepAliveMs;
    if (!sse.write({ comment: "keep-alive" }) || unread) slot?.release();
  }, keepAliveMs);
  const pump = async () => {
    try {
      for await (const event of readNdjson<RunEvent>(upstream)) {
        const frames = await translate(event);
        if (!frames.every((frame) => sse.write(frame))) return; // the client is gone
        if (FINAL_RUN_EVENTS.has(event.type)) return;
      }
      sse.write({
        data: {
          error: { message: "the run's event stream ended early; retry", type: "unavailable" },
        },
      });
    } catch (error) {
      log.error("run events relay failed", { error: errorText(error) });
      sse.write({
        data: { error: { message: "the session is unavailable; retry", type: "unavailable" } },
      });
    } finally {
      clearInterval(keepAlive);
      sse.close();
      slot?.release();
    }
  };
  void pump();
  return new Response(sse.readable, {
    headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
