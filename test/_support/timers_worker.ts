// Throwaway Worker for timers_test.ts: one DO that runs many calls out and turns, to see that workerd's cap on active timers is never reached; workerd.
// @ts-nocheck -- Deno's type check has no Workers types; esbuild strips the annotations.
import { DurableObject } from "cloudflare:workers";
import { fetchOut, readJsonAnswer } from "../../lib/runtime/http_out.ts";
import { runClaimedTurn } from "../../lib/session/run_claimed_turn.ts";

/** An answer at once, as a platform API's: the deadline is what is being counted, not the network. */
const _answering = () => Promise.resolve(Response.json({ ok: true }));

/**
 * `/raw?n=` sets n `AbortSignal.timeout`s (what the calls did before deadline.ts), `/fetch-out?n=`
 * makes n `fetchOut` calls, `/turns?n=` runs n turns through `runClaimedTurn`; each answers
 * "ok <n>", or 500 with the error's text.
 */
export class SessionDO extends DurableObject {
  override async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const n = Number(url.searchParams.get("n"));
    try {
      for (let i = 0; i < n; i++) {
        if (url.pathname === "/raw") AbortSignal.timeout(600_000);
        else if (url.pathname === "/fetch-out") {
          const res = await fetchOut("https://api.example/", {}, {
            api: "Example API",
            timeoutMs: 600_000,
            fetch: _answering,
          });
          await readJsonAnswer(res);
        } else {
          const usage = { prompt_tokens: 0, completion_tokens: 0 };
          const execute = () => Promise.resolve({ reply: "ok", messages: [], usage });
          const message = { text: `t${i}`, context: { session_key: "timers:1" } };
          const ran = await runClaimedTurn(
            execute,
            message,
            [],
            { step: 0, messages: [] },
            new AbortController(),
            600_000,
          );
          if (ran.outcome.status !== "completed") throw new Error(JSON.stringify(ran.outcome));
        }
      }
      return new Response(`ok ${n}`);
    } catch (error) {
      return new Response(String(error), { status: 500 });
    }
  }
}

export default {
  fetch(req: Request, env: { SESSIONS: DurableObjectNamespace }): Promise<Response> {
    const name = new URL(req.url).searchParams.get("object") ?? "timers";
    return env.SESSIONS.get(env.SESSIONS.idFromName(name)).fetch(req);
  },
};
