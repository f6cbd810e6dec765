// Bench floor: a Worker that forwards the chat completion to the model (JSON or SSE relayed), plus an empty SQLite Durable Object for workerd's own costs and a chat's floor (store, then reply); workerd.
import { DurableObject } from "cloudflare:workers";

// Deno's type check has no Workers types (it sees "cloudflare:workers" as `any`), so the few
// parts used here are declared by hand; esbuild strips them.
interface _State {
  storage: { sql: { exec(query: string, ...bindings: unknown[]): { toArray(): unknown[] } } };
  waitUntil(promise: Promise<unknown>): void;
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
  /** The fake Telegram's secret, token and API root (the `/telegram` route). */
  TELEGRAM_WEBHOOK_SECRET?: string;
  TELEGRAM_BOT_TOKEN?: string;
  TELEGRAM_API_ROOT?: string;
  /** `EmptyDO` on SQLite. */
  EMPTY: _Namespace;
}

/** What the object does before answering, in order: one INSERT, or one model call. */
type Step = "write" | "fetch";

/** The parts of a Telegram message update the `/telegram` route reads. */
interface _Update {
  message?: { message_id?: number; chat?: { id?: number }; text?: string };
}

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
        this.#insert(body);
      } else {
        const res = await callModel(this.env, body);
        reply = { status: res.status, body: await res.json() };
      }
    }
    return reply;
  }

  /**
   * What a new chat's first message must do at the least, as baton's session object does it:
   * the message stored (one INSERT, durable before this call's answer leaves: workerd's output
   * gate), the answer given (the webhook's ack), then on its own the model call, the reply
   * stored (one INSERT) and sent (sendMessage, held until that write is durable).
   */
  chat(chatId: number, messageId: number, text: string): void {
    this.#insert(text);
    this.ctx.waitUntil(
      this.#reply(chatId, messageId, text).catch((e) => console.error("floor: reply failed", e)),
    );
  }

  async #reply(chatId: number, messageId: number, text: string): Promise<void> {
    const body = JSON.stringify({ model: "any", messages: [{ role: "user", content: text }] });
    const completion = await (await callModel(this.env, body)).json() as {
      choices?: { message?: { content?: string } }[];
    };
    const reply = completion.choices?.[0]?.message?.content ?? "";
    this.#insert(reply);
    const root = (this.env.TELEGRAM_API_ROOT ?? "").replace(/\/+$/, "");
    const sent = await fetch(`${root}/bot${this.env.TELEGRAM_BOT_TOKEN}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        chat_id: chatId,
        text: reply,
        reply_parameters: { message_id: messageId, allow_sending_without_reply: true },
      }),
    });
    await sent.body?.cancel();
  }

  #insert(body: string): void {
    if (!this.#table) {
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS writes (body TEXT)");
      this.#table = true;
    }
    this.ctx.storage.sql.exec("INSERT INTO writes (body) VALUES (?)", body);
  }
}
export { EmptyDO };

/** The one object the write-then-fetch routes share (their requests are sequential). */
const WRITES_OBJECT = "floor-writes";

export default {
  /**
   * `GET /empty/<name>`: `ping` on object `<name>`. `POST /do-<steps>` (e.g. /do-write-fetch):
   * those steps on one object, the body being the chat completion. `POST /telegram`: a Telegram
   * message update, stored by its chat's object (`chat`), acknowledged once stored, answered
   * with the model's reply. Anything else: the floor, the completion forwarded to the model with
   * nothing around it.
   */
  async fetch(req: Request, env: Env): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path === "/telegram") return await _telegram(req, env);
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

/**
 * `POST /telegram`: the secret checked, the update's message handed to its chat's object (one
 * object per chat, named by the chat id as baton names a session), acknowledged when stored.
 */
async function _telegram(req: Request, env: Env): Promise<Response> {
  if (req.headers.get("X-Telegram-Bot-Api-Secret-Token") !== env.TELEGRAM_WEBHOOK_SECRET) {
    return Response.json({ error: "unauthorized" }, { status: 401 });
  }
  const message = (await req.json().catch(() => null) as _Update | null)?.message;
  const chatId = message?.chat?.id, messageId = message?.message_id;
  if (typeof chatId !== "number" || typeof messageId !== "number" || !message?.text) {
    return Response.json({ error: "not a text message update" }, { status: 400 });
  }
  await env.EMPTY.get(env.EMPTY.idFromName(`chat:${chatId}`)).chat(chatId, messageId, message.text);
  return Response.json({ ok: true });
}
