// Fake OpenAI-compatible Chat Completions server on loopback, for baton's tests and a deployment's own (`baton/testing`); Deno or Node (node:http), never in a Worker.
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Token counts the fake reports for a reply (`usage`; default 1 prompt and 1 completion token);
 * `cached_tokens` goes out as `prompt_tokens_details.cached_tokens`.
 */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** One scripted reply of the fake model. */
export type FakeModelStep =
  | {
    kind: "text";
    text: string;
    delayMs?: number;
    usage?: FakeUsage;
    finish?: "stop" | "length";
    /**
     * Streamed: sends this many of the text's pieces (it goes in 3), then waits for `release()`
     * (or the client going away) before the rest — a reply caught mid-stream.
     */
    holdAfter?: number;
    /** Streamed: waits this long between pieces — a reply written slowly, for previews. */
    pieceDelayMs?: number;
    /** Streamed: how many pieces the text goes in (default 3). */
    pieces?: number;
    /**
     * Images the reply carries (`data:` or https URLs): in `message.images` as OpenRouter sends
     * them (default; streamed as `delta.images`, one chunk each), or as `image_url` parts of
     * `content` after its text (`imagesIn: "content"`; a stream sends them as `delta.images`).
     */
    images?: string[];
    imagesIn?: "images" | "content";
  }
  | {
    kind: "tool_call";
    name: string;
    args: Record<string, unknown>;
    id?: string;
    delayMs?: number;
    usage?: FakeUsage;
    /** Text the model writes before the call ("Let me look…"), streamed in `pieces`. */
    text?: string;
    pieces?: number;
    /** Streamed: waits this long between pieces. */
    pieceDelayMs?: number;
  }
  | { kind: "status"; status: number; retryAfter?: string; body?: unknown }
  /** Waits for `release()` (or client disconnect), then answers like the default echo. */
  | { kind: "hold" };

/** One received POST /v1/chat/completions. */
export interface FakeModelRequest {
  // deno-lint-ignore no-explicit-any
  body: any;
  headers: Headers;
  /** Text of the last message with role "user" ("" if none). */
  lastUserText: string;
  /** First `[tag:x]` found in all message contents, else "". */
  sessionTag: string;
}

/** Handle on a running fake model server. */
export interface FakeModel {
  /** Base URL for LLM_BASE_URL, e.g. "http://127.0.0.1:PORT/v1". */
  url: string;
  /** Every received POST /v1/chat/completions, in arrival order. */
  requests: FakeModelRequest[];
  /** Requests currently being answered. */
  inFlight: number;
  /** Peak concurrent requests per session tag. */
  maxInFlightBySession: Map<string, number>;
  /** Replaces the responder; the default echoes the last user message's text. */
  script(fn: (req: FakeModelRequest) => FakeModelStep | Promise<FakeModelStep>): void;
  /** Releases every "hold" waiting now. */
  release(): void;
  /** Resolves once `requests.length >= n`; rejects after `timeoutMs` (default 10 s). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /**
   * Back to a fresh fake for the next test on a shared Worker: holds released, the record and the
   * peaks cleared, the echo responder back — and no release left over to free a later hold.
   */
  reset(): void;
  /** Stops the server; pending holds and delays end. */
  close(): Promise<void>;
}

type _Responder = (req: FakeModelRequest) => FakeModelStep | Promise<FakeModelStep>;

const _echo: _Responder = (req) => ({ kind: "text", text: req.lastUserText });

function _textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  }
  return "";
}

function _imagePart(url: string) {
  return { type: "image_url", image_url: { url } };
}

/** A reply message with images: in OpenRouter's `images`, or as `content` parts after the text. */
function _withImages(text: string, urls: string[], where: "images" | "content") {
  const parts = urls.map(_imagePart);
  return where === "images"
    ? { role: "assistant", content: text, images: parts }
    : { role: "assistant", content: [...(text ? [{ type: "text", text }] : []), ...parts] };
}

function _split(s: string, parts: number): string[] {
  if (s.length < 2) return [s];
  const n = Math.min(parts, s.length);
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** An answer; with `holdAt`, the chunks from that index wait for `release()`. */
type _Reply = {
  status: number;
  headers: Record<string, string>;
  chunks: string[];
  holdAt?: number;
  /** A pause before each chunk after the first (a slowly written stream). */
  gapMs?: number;
};

const _json = (status: number, body: unknown, headers: Record<string, string> = {}): _Reply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  chunks: [JSON.stringify(body)],
});

// node:http, not Deno.serve: Deno.serve (2.9.5) misses about half of workerd's disconnects
// (socket left in CLOSE-WAIT, request.signal never aborts); node:http's "close" sees all of them.
class _FakeModelServer implements FakeModel {
  url = "";
  requests: FakeModelRequest[] = [];
  inFlight = 0;
  maxInFlightBySession = new Map<string, number>();
  #active = new Set<Promise<void>>();
  #server = createServer((req, res) => {
    const p = this.#handle(req, res).finally(() => this.#active.delete(p));
    this.#active.add(p);
  });
  #responder: _Responder = _echo;
  #holds = new Set<() => void>();
  /** Counts release() calls, so a release that comes before a hold is armed still frees it. */
  #releases = 0;
  #timers = new Map<ReturnType<typeof setTimeout>, () => void>();
  #waiters = new Set<{ n: number; done: () => void }>();
  #inFlightByTag = new Map<string, number>();
  #seq = 0;
  #closed = false;

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
        resolve();
      });
    });
  }

  script(fn: _Responder): void {
    this.#responder = fn;
  }

  release(): void {
    this.#releases++;
    const holds = [...this.#holds];
    this.#holds.clear();
    for (const r of holds) r();
  }

  reset(): void {
    this.release();
    this.#releases = 0;
    this.requests.length = 0;
    this.maxInFlightBySession.clear();
    this.#responder = _echo;
  }

  waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        n,
        done: () => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`fake LLM: ${this.requests.length}/${n} requests after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const [id, end] of this.#timers) {
      clearTimeout(id);
      end();
    }
    this.#timers.clear();
    this.release();
    await Promise.all(this.#active);
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    const force = setTimeout(() => this.#server.closeAllConnections(), 1000);
    await closed;
    clearTimeout(force);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableEnded) gone.abort();
    });
    res.on("error", () => {});
    let reply: _Reply | undefined;
    try {
      reply = await this.#route(req, gone.signal);
    } catch (e) {
      reply = _json(500, { error: { message: `fake LLM script: ${e}`, type: "server_error" } });
    }
    if (!reply || gone.signal.aborted || res.destroyed) return;
    res.writeHead(reply.status, reply.headers);
    const holdAt = reply.holdAt ?? reply.chunks.length;
    for (const [i, c] of reply.chunks.slice(0, holdAt).entries()) {
      if (reply.gapMs && i > 0) {
        await new Promise((r) => setTimeout(r, reply!.gapMs));
        if (gone.signal.aborted || res.destroyed) return;
      }
      res.write(c);
    }
    if (holdAt < reply.chunks.length) {
      await this.#pause(gone.signal, (end) => {
        this.#holds.add(end);
        return () => this.#holds.delete(end);
      });
      if (gone.signal.aborted || res.destroyed) return;
      for (const c of reply.chunks.slice(holdAt)) res.write(c);
    }
    res.end();
  }

  async #route(req: IncomingMessage, gone: AbortSignal): Promise<_Reply | undefined> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const chunks: Uint8Array[] = [];
    for await (const c of req) chunks.push(c);
    if (req.method === "GET" && path === "/v1/models") {
      return _json(200, { object: "list", data: [{ id: "fake-model", object: "model" }] });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return _json(404, { error: { message: "not found", type: "invalid_request_error" } });
    }
    // deno-lint-ignore no-explicit-any
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return _json(400, { error: { message: "bad json", type: "invalid_request_error" } });
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    }
    const messages: { role?: string; content?: unknown }[] = Array.isArray(body?.messages)
      ? body.messages
      : [];
    const lastUser = messages.findLast((m) => m?.role === "user");
    const tag = /\[tag:([^\]]+)\]/.exec(messages.map((m) => _textOf(m?.content)).join("\n"));
    const fr: FakeModelRequest = {
      body,
      headers,
      lastUserText: _textOf(lastUser?.content),
      sessionTag: tag?.[1] ?? "",
    };
    this.requests.push(fr);
    const releasesAtArrival = this.#releases;
    for (const w of [...this.#waiters]) if (this.requests.length >= w.n) w.done();

    this.#enter(fr.sessionTag);
    try {
      const step = await this.#responder(fr);
      if (step.kind === "hold" && this.#releases === releasesAtArrival) {
        await this.#pause(gone, (end) => {
          this.#holds.add(end);
          return () => this.#holds.delete(end);
        });
      } else if ((step.kind === "text" || step.kind === "tool_call") && step.delayMs) {
        const ms = step.delayMs;
        await this.#pause(gone, (end) => {
          const id = setTimeout(() => {
            this.#timers.delete(id);
            end();
          }, ms);
          this.#timers.set(id, end);
          return () => {
            clearTimeout(id);
            this.#timers.delete(id);
          };
        });
      }
      if (gone.aborted) return undefined;
      if (step.kind !== "hold") return this.#reply(body, step);
      if (this.#closed) {
        return _json(503, { error: { message: "fake LLM closed", type: "server_error" } });
      }
      return this.#reply(body, { kind: "text", text: fr.lastUserText });
    } finally {
      this.#leave(fr.sessionTag);
    }
  }

  /** Waits until `arm`'s `end` is called or the client disconnects; `arm` returns its disarm. */
  #pause(gone: AbortSignal, arm: (end: () => void) => () => void): Promise<void> {
    if (this.#closed || gone.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        disarm();
        gone.removeEventListener("abort", finish);
        resolve();
      };
      const disarm = arm(finish);
      gone.addEventListener("abort", finish);
    });
  }

  #enter(tag: string): void {
    this.inFlight++;
    const n = (this.#inFlightByTag.get(tag) ?? 0) + 1;
    this.#inFlightByTag.set(tag, n);
    if (n > (this.maxInFlightBySession.get(tag) ?? 0)) this.maxInFlightBySession.set(tag, n);
  }

  #leave(tag: string): void {
    this.inFlight--;
    this.#inFlightByTag.set(tag, (this.#inFlightByTag.get(tag) ?? 1) - 1);
  }

  // deno-lint-ignore no-explicit-any
  #reply(body: any, step: Exclude<FakeModelStep, { kind: "hold" }>): _Reply {
    if (step.kind === "status") {
      const headers: Record<string, string> = {};
      if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
      return _json(
        step.status,
        step.body ?? { error: { message: "fake error", type: "server_error" } },
        headers,
      );
    }
    const id = `chatcmpl-fake-${++this.#seq}`;
    const created = Math.floor(Date.now() / 1000);
    const model = body?.model ?? "fake-model";
    const counts = step.usage ?? { prompt_tokens: 1, completion_tokens: 1 };
    const usage = {
      prompt_tokens: counts.prompt_tokens,
      completion_tokens: counts.completion_tokens,
      total_tokens: counts.prompt_tokens + counts.completion_tokens,
      ...(counts.cached_tokens
        ? { prompt_tokens_details: { cached_tokens: counts.cached_tokens } }
        : {}),
    };
    const call = step.kind === "tool_call"
      ? {
        id: step.id ?? `call_fake_${this.#seq}`,
        type: "function",
        function: { name: step.name, arguments: JSON.stringify(step.args) },
      }
      : undefined;
    const finish = call ? "tool_calls" : step.kind === "text" && step.finish ? step.finish : "stop";
    if (body?.stream !== true) {
      const message = call
        ? {
          role: "assistant",
          content: step.kind === "tool_call" ? step.text ?? null : null,
          tool_calls: [call],
        }
        : step.kind === "text" && step.images?.length
        ? _withImages(step.text, step.images, step.imagesIn ?? "images")
        : { role: "assistant", content: step.kind === "text" ? step.text : "" };
      return _json(200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason }],
    });
    const events: unknown[] = [chunk({ role: "assistant" })];
    if (call) {
      if (step.kind === "tool_call" && step.text) {
        for (const piece of _split(step.text, step.pieces ?? 3)) {
          events.push(chunk({ content: piece }));
        }
      }
      events.push(chunk({
        tool_calls: [{
          index: 0,
          id: call.id,
          type: "function",
          function: { name: call.function.name, arguments: "" },
        }],
      }));
      for (const piece of _split(call.function.arguments, 2)) {
        events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
      }
    } else if (step.kind === "text") {
      const pieces = step.kind === "text" ? step.pieces ?? 3 : 3;
      for (const piece of _split(step.text, pieces)) events.push(chunk({ content: piece }));
      for (const url of step.images ?? []) events.push(chunk({ images: [_imagePart(url)] }));
    }
    events.push(chunk({}, finish));
    if (body?.stream_options?.include_usage) {
      events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
    }
    return {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      chunks: [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), "data: [DONE]\n\n"],
      // After the role chunk and `holdAfter` pieces of the text.
      ...(step.kind === "text" && step.holdAfter !== undefined
        ? { holdAt: 1 + step.holdAfter }
        : {}),
      ...(step.pieceDelayMs ? { gapMs: step.pieceDelayMs } : {}),
    };
  }
}

/** Starts a fake OpenAI-compatible model server on 127.0.0.1 (random port). */
export async function startFakeModel(): Promise<FakeModel> {
  const fake = new _FakeModelServer();
  await fake.start();
  return fake;
}
