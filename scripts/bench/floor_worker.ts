// Bench floor: a Worker that forwards the chat completion to the model (JSON or SSE relayed), plus an empty SQLite Durable Object for workerd's own costs, a chat's floor (store, then reply) and a streamed turn's; workerd.
import { DurableObject } from "cloudflare:workers";
import { sendTelegramReply } from "./_telegram_reply.ts";

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

/** The parts of a streamed completion chunk the object reads. */
interface _Chunk {
  choices?: { delta?: { content?: unknown } }[];
}

/** One line of the object's NDJSON stream: a content delta, or the end (the reply stored). */
type _StreamLine = { delta: string } | { done: true };

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

  /**
   * What a streamed turn that keeps baton's promises must do at the least, in the same hops as
   * baton's `SessionDO.submitAndSubscribe`: the claim stored (one INSERT), the NDJSON stream
   * returned over RPC at once, then the model asked (workerd's output gate holds that fetch until
   * the claim is durable), each content delta of its SSE passed on as one line, the reply stored
   * (one INSERT) and `{"done":true}` last. A failed model call errors the stream.
   */
  stream(body: string): ReadableStream<Uint8Array> {
    this.#insert(body);
    let out!: ReadableStreamDefaultController<Uint8Array>;
    const readable = new ReadableStream<Uint8Array>({ start: (c) => void (out = c) });
    const encoder = new TextEncoder();
    const send = (line: _StreamLine) => out.enqueue(encoder.encode(`${JSON.stringify(line)}\n`));
    const relay = async () => {
      const res = await callModel(this.env, body);
      if (res.status !== 200 || !res.body) throw new Error(`model answered ${res.status}`);
      let reply = "";
      for await (const data of _sseData(res.body)) {
        if (data === "[DONE]") continue;
        const delta = (JSON.parse(data) as _Chunk).choices?.[0]?.delta?.content;
        if (typeof delta !== "string" || !delta) continue;
        reply += delta;
        send({ delta });
      }
      this.#insert(reply);
      send({ done: true });
      out.close();
    };
    this.ctx.waitUntil(relay().catch((e) => out.error(e)));
    return readable;
  }

  async #reply(chatId: number, messageId: number, text: string): Promise<void> {
    const body = JSON.stringify({ model: "any", messages: [{ role: "user", content: text }] });
    const completion = await (await callModel(this.env, body)).json() as {
      choices?: { message?: { content?: string } }[];
    };
    const reply = completion.choices?.[0]?.message?.content ?? "";
    this.#insert(reply);
    const { TELEGRAM_API_ROOT = "", TELEGRAM_BOT_TOKEN = "" } = this.env;
    await sendTelegramReply(TELEGRAM_API_ROOT, TELEGRAM_BOT_TOKEN, chatId, messageId, reply);
  }

  /** The bodies this object stored, oldest first (floor_worker_test.ts checks the floors' writes). */
  writes(): string[] {
    this.#createTable();
    return this.ctx.storage.sql.exec("SELECT body FROM writes ORDER BY rowid").toArray()
      .map((row) => (row as { body: string }).body);
  }

  #insert(body: string): void {
    this.#createTable();
    this.ctx.storage.sql.exec("INSERT INTO writes (body) VALUES (?)", body);
  }

  #createTable(): void {
    if (this.#table) return;
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS writes (body TEXT)");
    this.#table = true;
  }
}
export { EmptyDO };

/** The one object the write-then-fetch routes share (their requests are sequential). */
const WRITES_OBJECT = "floor-writes";
/** The one object the `/stream-object` route's turns share, as a streamed API session would. */
const STREAM_OBJECT = "floor-stream";

export default {
  /**
   * `GET /empty/<name>`: `ping` on object `<name>`; `GET /writes/<name>`: what it stored. `POST /do-<steps>` (e.g. /do-write-fetch):
   * those steps on one object, the body being the chat completion. `POST /telegram`: a Telegram
   * message update, stored by its chat's object (`chat`), acknowledged once stored, answered
   * with the model's reply. `POST /stream-object`: a streamed completion through one warm object
   * (`stream`), its NDJSON turned into SSE chunks here as baton's Worker does. Anything else:
   * the floor, the completion forwarded to the model with nothing around it.
   */
  async fetch(req: Request, env: Env): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path === "/telegram") return await _telegram(req, env);
    if (path === "/stream-object") {
      const object = env.EMPTY.get(env.EMPTY.idFromName(STREAM_OBJECT));
      const lines = await object.stream(await req.text());
      return new Response(lines.pipeThrough(_ndjsonToSse()), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    if (path.startsWith("/writes/")) {
      const name = decodeURIComponent(path.slice("/writes/".length));
      return Response.json(await env.EMPTY.get(env.EMPTY.idFromName(name)).writes());
    }
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

/** The `data:` of each SSE event in `body`, in order. */
async function* _sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const data = buffered.slice(0, end).split("\n").filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart()).join("\n");
      buffered = buffered.slice(end + 2);
      if (data) yield data;
    }
  }
}

/** The object's NDJSON lines as OpenAI SSE: a chunk per delta, `[DONE]` at the end. */
function _ndjsonToSse(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder(), encoder = new TextEncoder();
  let buffered = "";
  return new TransformStream({
    transform(bytes, out) {
      buffered += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = JSON.parse(buffered.slice(0, end)) as _StreamLine;
        buffered = buffered.slice(end + 1);
        const data = "done" in line
          ? "[DONE]"
          : JSON.stringify({ choices: [{ index: 0, delta: { content: line.delta } }] });
        out.enqueue(encoder.encode(`data: ${data}\n\n`));
      }
    },
  });
}
