// A plain (non-streaming) API answer that may have to wait for an approval: headers first once the turn pauses, the JSON body when it ends; Workers.
import type { TurnOutcome } from "../lib/session/mod.ts";
import { RUN_ID_HEADER, runId } from "../lib/openai/mod.ts";
import { RequestError } from "./_http.ts";
import { errorText, log } from "../lib/runtime/mod.ts";

/** A finished run of a plain API request: where it ran, its seq and its outcome. */
export type PlainRun<P> = { placement: P; seq: number; outcome: TurnOutcome };

/**
 * Answers a plain API request. `run` starts its turn, telling `onPaused` where it runs if the turn
 * pauses for approval. A turn that ends without pausing gets `respond`'s answer as it is (its
 * status code too, so errors stay errors for clients that retry). A turn that pauses cannot wait
 * for its body before anything goes out — the client needs the run id to answer — so the
 * response starts then: status 200 and headers at once (`X-Baton-Run-Id` of `tenant`'s run,
 * `sessionOf`'s `X-Session-Id`), a newline every `keepAliveMs` (JSON allows leading whitespace, so the body
 * still parses) and `respond`'s JSON body once the turn ends, whatever its status; a client that
 * disconnects only stops the relay, never the turn.
 */
export async function heldReply<P>(
  run: (onPaused: (placement: P, seq: number) => void) => Promise<PlainRun<P>>,
  respond: (run: PlainRun<P>) => Promise<Response>,
  sessionOf: (placement: P) => string,
  tenant: string,
  keepAliveMs: number,
): Promise<Response> {
  let onPaused!: (placement: P, seq: number) => void;
  const paused = new Promise<{ placement: P; seq: number }>((resolve) => {
    onPaused = (placement, seq) => resolve({ placement, seq });
  });
  const done = run(onPaused);
  const first = await Promise.race([
    done.then((ended) => ({ ended })),
    paused.then((at) => ({ at })),
  ]);
  if ("ended" in first) {
    const response = await respond(first.ended);
    const { placement, seq } = first.ended;
    response.headers.set(RUN_ID_HEADER, runId(tenant, sessionOf(placement), seq));
    return response;
  }
  const session = sessionOf(first.at.placement);
  const encoder = new TextEncoder();
  let open = true;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (open) controller.enqueue(encoder.encode(text));
      };
      // A first byte, so that every proxy on the way passes the headers on now.
      write("\n");
      keepAlive = setInterval(() => write("\n"), keepAliveMs);
      const finish = async () => {
        try {
          write(await (await respond(await done)).text());
        } catch (error) {
          log.error("held reply failed", { error: errorText(error) });
          // The status went out already: the error can only be the body (see docs/guides/approvals.md).
          const known = error instanceof RequestError;
          const message = known ? error.message : "the session is unavailable; retry";
          write(JSON.stringify({ error: { message, type: known ? error.type : "unavailable" } }));
        } finally {
          clearInterval(keepAlive);
          if (open) controller.close();
          open = false;
        }
      };
      void finish();
    },
    cancel() {
      // The client went away: the turn goes on in its session object; only the relay stops.
      open = false;
      clearInterval(keepAlive);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "application/json",
      "cache-control": "no-cache",
      "X-Session-Id": session,
      [RUN_ID_HEADER]: runId(tenant, session, first.at.seq),
    },
  });
}
