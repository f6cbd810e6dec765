// Throwaway Worker for harness_smoke_test.ts: one SQLite-backed DO that calls the LLM; workerd.
// @ts-nocheck -- Deno's type check has no Workers types; esbuild strips the annotations.
import { DurableObject } from "cloudflare:workers";

interface Env {
  SESSIONS: DurableObjectNamespace<SessionDO>;
  LLM_BASE_URL: string;
}

/** Test DO (`/log?v=` on the Worker logs `v`): `/llm` proxies one chat completion, `/put?v=` and `/get` use `ctx.storage.sql`. */
export class SessionDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT)");
  }

  override async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname === "/llm") {
      const res = await fetch(this.env.LLM_BASE_URL + "/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          messages: [{ role: "user", content: await req.text() }],
        }),
      });
      return new Response(res.body, { status: res.status, headers: res.headers });
    }
    if (url.pathname === "/put") {
      this.ctx.storage.sql.exec(
        "INSERT OR REPLACE INTO kv VALUES ('k', ?)",
        url.searchParams.get("v"),
      );
      return new Response("ok");
    }
    const row =
      this.ctx.storage.sql.exec<{ v: string }>("SELECT v FROM kv WHERE k = 'k'").toArray()[0];
    return new Response(row?.v ?? "");
  }
}

export default {
  fetch(req: Request, env: Env): Promise<Response> {
    // A deliberately leaking line, for the harness's secret check.
    const url = new URL(req.url);
    if (url.pathname === "/log") {
      console.log(JSON.stringify({ level: "info", message: url.searchParams.get("v") }));
      return Promise.resolve(new Response("logged"));
    }
    return env.SESSIONS.get(env.SESSIONS.idFromName("smoke")).fetch(req);
  },
} satisfies ExportedHandler<Env>;
