// Bench floor: a Worker that forwards the chat completion to the model (JSON or SSE relayed), plus an empty SQLite Durable Object for workerd's own costs; workerd.
import { DurableObject } from "cloudflare:workers";

// Deno's type check has no Workers types (it sees "cloudflare:workers" as `any`), so the few
// parts used here are declared by hand; esbuild strips them.
interface _State {
  storage: { sql: { exec(query: string, ...bindings: unknown[]): { toArray(): unknown[] } } };
}
interface _Namespace {
  idFromName(name: string): unknown;
  get(id: unknown): EmptyDO;
}
const _Base = DurableObject as unknown as new (ctx: _State, env: Env) => {
  readonly ctx: _State;
  readonly env: Env;
};

interface Env {
  LLM_BASE_URL: string;
  LLM_API_KEY?: string;
  /** `EmptyDO` on SQLite. */
  EMPTY: _Namespace;
}

/** What the object does before answering, in order: one INSERT, or one model call. */
type Step = "write" | "fetch";

/** A model reply passed back over RPC. */
interface ModelReply {
  status: number;
  body: unknown;
}

/** One chat completion, as the floor forwards it. */
async function callModel(env: Env, body: string): Promise<Response> {
  return await fetch(`${env.LLM_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${env.LLM_API_KEY ?? ""}`,
    },
    body,
  });
}

/**
 * A Durable Object with no baton code: `ping` is what a new or warm object costs by itself,
 * `run` what a durable write before a model call costs (workerd's output gate holds the
 * outgoing fetch until the write before it is on disk).
 */
class EmptyDO extends _Base {
  // Created on the first write, not in the constructor, so that `ping` on a new object stays a
  // read: the new-object figure is then the object and its SQLite file, not a first commit.
  #table = false;

  /** One `SELECT 1` on the object's SQLite. */
  ping(): number {
    this.ctx.storage.sql.exec("SELECT 1").toArray();
    return 1;
  }

  /** Runs `steps` in order (each write its own implicit commit); returns the last model reply. */
  async run(steps: Step[], body: string): Promise<ModelReply> {
    let reply: ModelReply = { status: 500, body: "no model call" };
    for (const step of steps) {
      if (step === "write") {
        if (!this.#table) {
          this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS writes (body TEXT)");
          this.#table = true;
        }
        this.ctx.storage.sql.exec("INSERT INTO writes (body) VALUES (?)", body);
      } else {
        const res = await callModel(this.env, body);
        reply = { status: res.status, body: await res.json() };
      }
    }
    return reply;
  }
}
export { EmptyDO };

/** The one object the write-then-fetch routes share (their requests are sequential). */
const WRITES_OBJECT = "floor-writes";

export default {
  /**
   * `GET /empty/<name>`: `ping` on object `<name>`. `POST /do-<steps>` (e.g. /do-write-fetch):
   * those steps on one object, the body being the chat completion. Anything else: the floor,
   * the completion forwarded to the model with nothing around it.
   */
  async fetch(req: Request, env: Env): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path.startsWith("/empty/")) {
      const name = decodeURIComponent(path.slice("/empty/".length));
      await env.EMPTY.get(env.EMPTY.idFromName(name)).ping();
      return new Response("ok");
    }
    if (path.startsWith("/do-")) {
      const steps = path.slice("/do-".length).split("-");
      if (!steps.every((s): s is Step => s === "write" || s === "fetch")) {
        return new Response("unknown steps", { status: 404 });
      }
      const object = env.EMPTY.get(env.EMPTY.idFromName(WRITES_OBJECT));
      const reply = await object.run(steps, await req.text());
      return Response.json(reply.body, { status: reply.status });
    }
    const res = await callModel(env, await req.text());
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      return new Response(res.body, {
        status: res.status,
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    return Response.json(await res.json(), { status: res.status });
  },
};
