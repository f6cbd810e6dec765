// Fake OpenAI-compatible Chat Completions server on loopback, for baton's tests and a deployment's own (`baton/testing`); Deno or Node (node:http), never in a Worker.
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeReply, fakeReply, jsonReply } from "./fake_reply.ts";

export type { FakeModelStep, FakeUsage } from "./fake_step.ts";
import type { FakeModelStep } from "./fake_step.ts";

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
    let reply: FakeReply | undefined;
    try {
      reply = await this.#route(req, gone.signal);
    } catch (e) {
      reply = jsonReply(500, { error: { message: `fake LLM script: ${e}`, type: "server_error" } });
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

  async #route(req: IncomingMessage, gone: AbortSignal): Promise<FakeReply | undefined> {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const chunks: Uint8Array[] = [];
    for await (const c of req) chunks.push(c);
    if (req.method === "GET" && path === "/v1/models") {
      return jsonReply(200, { object: "list", data: [{ id: "fake-model", object: "model" }] });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return jsonReply(404, { error: { message: "not found", type: "invalid_request_error" } });
    }
    // deno-lint-ignore no-explicit-any
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return jsonReply(400, { error: { message: "bad json", type: "invalid_request_error" } });
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
        return jsonReply(503, { error: { message: "fake LLM closed", type: "server_error" } });
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
  #reply(body: any, step: Exclude<FakeModelStep, { kind: "hold" }>): FakeReply {
    return fakeReply(body, step, () => ++this.#seq);
  }
}

/** Starts a fake OpenAI-compatible model server on 127.0.0.1 (random port). */
export async function startFakeModel(): Promise<FakeModel> {
  const fake = new _FakeModelServer();
  await fake.start();
  return fake;
}
