// A loopback HTTP server for the chaos run's fake platform APIs: seeded 429/5xx faults and held sends; Deno (node:http).
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RESEND_NOTE } from "../../lib/chat/mod.ts";

/** One request as a fake platform sees it. */
export interface FakeCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A fake's answer. */
export interface FakeAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Not sent: the request repeated an idempotency key of a post the fake had stored (LINE's retry
   * key, Chat's request id), so it was answered as that post, not stored again.
   */
  repeat?: boolean;
}

/** How the fake answers one send that a fault does not take (it stores the post, then answers). */
export type SendHandler = (call: FakeCall) => FakeAnswer | Promise<FakeAnswer>;

/** Faults a fake injects into sends, each drawn from the run's seed. */
export interface FaultRates {
  /** Share of sends and look-ups answered 429 with Retry-After. */
  rate429: number;
  /** Share of sends answered 5xx: half of them after the post was stored, half before. */
  rate5xx: number;
}

/** What a fake injected, for the report. */
export interface FaultCounts {
  sends: number;
  lookups: number;
  r429: number;
  r5xxPosted: number;
  r5xxNotPosted: number;
  held: number;
  /** Held sends the platform had stored when the connection went (the rest it had not). */
  heldPosted: number;
}

/** Counts of a fake that has injected nothing yet: where each run's counting starts. */
export function noFaults(): FaultCounts {
  return {
    sends: 0,
    lookups: 0,
    r429: 0,
    r5xxPosted: 0,
    r5xxNotPosted: 0,
    held: 0,
    heldPosted: 0,
  };
}

/** A held send: where it was held and whether the platform stored it first. */
export interface HeldSend {
  path: string;
  posted: boolean;
}

/** What became of one request: for reading a failed run's observation.json. */
export interface FakeEvent {
  at: number;
  method: string;
  path: string;
  /** The query string, without "?" ("" when none). */
  query: string;
  /** "ok", "429", "5xx stored", "5xx not stored", "held stored", "held not stored", "threw …". */
  fate: string;
  status: number;
  /** The start of the text sent, when there was one (after the resend note, if it had one). */
  text?: string;
  /** The whole text's length (two edits with the same start may still differ). */
  length?: number;
  /** The text started with baton's resend note. */
  marked?: boolean;
  /** The chat it went to, named as `ShownPost.chat` names it. */
  chat?: string;
  /** A presence signal or a key-set read: never faulted, no message. */
  quiet?: true;
  /** See `FakeAnswer.repeat`. */
  repeat?: true;
}

/** A running fake platform API. */
export interface ChaosServer {
  url: string;
  faults: FaultCounts;
  /** Every request and its fate, in arrival order. */
  events: FakeEvent[];
  /**
   * Holds the next send open (stored first when `posted`), until the connection goes (a kill) or
   * `close()`; resolves when one is held. With `only`, the next send it accepts (an upload).
   */
  holdNext(posted: boolean, only?: (call: FakeCall) => boolean): Promise<HeldSend>;
  /** Cancels an armed hold no send has met yet. */
  disarm(): void;
  close(): Promise<void>;
}

/**
 * Starts a fake API on 127.0.0.1. `isSend` tells sends (faulted, holdable) from look-ups (429s
 * only); `route` answers everything that is not a fault. `faultAnswer` shapes a 429/5xx.
 */
export async function startChaosServer(options: {
  isSend: (call: FakeCall) => boolean;
  route: SendHandler;
  faultAnswer: (status: number) => FakeAnswer;
  /** The chat a request goes to, for the record of requests. */
  chatOf: (call: FakeCall) => string | undefined;
  /** The text a request sends (default: the body's `text`, `content` or `body`, if a string). */
  textOf?: (call: FakeCall) => unknown;
  /**
   * Requests answered by `route` as they are, never faulted, held or counted: presence signals
   * (typing, a loading animation) and the key sets a platform's deliveries are verified with.
   */
  quiet?: (call: FakeCall) => boolean;
  rates: FaultRates;
  random: () => number;
}): Promise<ChaosServer> {
  const faults = noFaults();
  let armed: {
    posted: boolean;
    only?: (call: FakeCall) => boolean;
    resolve: (held: HeldSend) => void;
  } | null = null;
  const events: FakeEvent[] = [];
  const releases = new Set<() => void>();
  const active = new Set<Promise<void>>();
  let closed = false;

  const answer = async (
    call: FakeCall,
    gone: AbortSignal,
    note: { fate: string },
  ): Promise<FakeAnswer | undefined> => {
    if (options.quiet?.(call)) return options.route(call);
    if (!options.isSend(call)) {
      faults.lookups++;
      if (options.random() < options.rates.rate429) {
        faults.r429++;
        note.fate = "429";
        return options.faultAnswer(429);
      }
      return options.route(call);
    }
    faults.sends++;
    if (armed && !closed && (armed.only?.(call) ?? true)) {
      const { posted, resolve } = armed;
      armed = null;
      faults.held++;
      if (posted) faults.heldPosted++;
      note.fate = posted ? "held stored" : "held not stored";
      const stored = posted ? await options.route(call) : undefined;
      resolve({ path: call.path, posted });
      // Held until the runtime dies (its connection closes) or the run ends.
      await new Promise<void>((done) => {
        if (gone.aborted) return done();
        const end = () => {
          releases.delete(end);
          done();
        };
        releases.add(end);
        gone.addEventListener("abort", end, { once: true });
      });
      return stored ?? options.faultAnswer(503);
    }
    const r = options.random();
    if (r < options.rates.rate429) {
      faults.r429++;
      note.fate = "429";
      return options.faultAnswer(429);
    }
    if (r < options.rates.rate429 + options.rates.rate5xx) {
      // Half the 5xx come after the platform stored the post: the sender cannot tell which.
      if (options.random() < 0.5) {
        faults.r5xxPosted++;
        note.fate = "5xx stored";
        await options.route(call);
      } else {
        faults.r5xxNotPosted++;
        note.fate = "5xx not stored";
      }
      return options.faultAnswer(options.random() < 0.5 ? 500 : 502);
    }
    return options.route(call);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableEnded) gone.abort();
    });
    res.on("error", () => {});
    const chunks: Uint8Array[] = [];
    try {
      for await (const c of req) chunks.push(c);
    } catch {
      return;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown = text;
    const type = req.headers["content-type"] ?? "";
    if (/^multipart\/form-data/i.test(type)) {
      // An upload (Telegram's sendPhoto): its fields, a file as its name, type and bytes.
      body = await _multipart(Buffer.concat(chunks), type);
    } else if (/^application\/x-www-form-urlencoded/i.test(type)) {
      // A form (Twilio's Messages API, OAuth token endpoints): its fields as an object.
      body = Object.fromEntries(new URLSearchParams(text));
    } else {
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // Kept as text.
      }
    }
    const url = new URL(req.url ?? "/", "http://fake");
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
    }
    const call = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers,
      body,
    };
    let reply: FakeAnswer | undefined;
    const at = Date.now();
    const note = { fate: "ok" };
    try {
      reply = await answer(call, gone.signal, note);
    } catch (error) {
      note.fate = `threw ${error}`;
      reply = { status: 500, body: { error: `fake: ${error}` } };
    }
    // deno-lint-ignore no-explicit-any
    const sent = call.body as any;
    const said = options.textOf ? options.textOf(call) : sent?.text ?? sent?.content ?? sent?.body;
    const marked = typeof said === "string" && said.startsWith(RESEND_NOTE);
    events.push({
      at,
      method: call.method,
      path: call.path,
      query: call.query.toString(),
      chat: options.chatOf(call),
      fate: note.fate,
      status: reply?.status ?? 0,
      ...(options.quiet?.(call) ? { quiet: true as const } : {}),
      ...(reply?.repeat ? { repeat: true as const } : {}),
      ...(typeof said === "string"
        ? {
          text: said.slice(marked ? RESEND_NOTE.length : 0).slice(0, 80),
          length: said.length,
          marked,
        }
        : {}),
    });
    if (!reply || gone.signal.aborted || res.destroyed) return;
    // Bytes (a file server's answer) go as they are; anything else as JSON.
    const raw = reply.body instanceof Uint8Array;
    res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
    res.end(raw ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body));
  };

  // node:http, not Deno.serve: it sees every disconnect of a held request (see fake_llm.ts).
  const server = createServer((req, res) => {
    const p = handle(req, res).finally(() => active.delete(p));
    active.add(p);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    events,
    holdNext(posted, only) {
      return new Promise((resolve) => {
        armed = { posted, only, resolve };
      });
    },
    disarm() {
      armed = null;
    },
    async close() {
      closed = true;
      armed = null;
      for (const end of [...releases]) end();
      await Promise.all(active);
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), 1000);
      await done;
      clearTimeout(force);
    },
  };
}

/** A multipart body's fields: strings as they are, a file as `{ filename, type, bytes }`; text when unreadable. */
async function _multipart(raw: Uint8Array, type: string): Promise<unknown> {
  try {
    const form = await new Response(new Uint8Array(raw), { headers: { "content-type": type } })
      .formData();
    const fields: Record<string, unknown> = {};
    for (const [key, value] of form) {
      fields[key] = typeof value === "string" ? value : {
        filename: value.name,
        type: value.type,
        bytes: new Uint8Array(await value.arrayBuffer()),
      };
    }
    return fields;
  } catch {
    return new TextDecoder().decode(raw);
  }
}

/**
 * A fake broken on purpose, to check the checks: "blind-read-backs" (GitHub's list and Slack's
 * history never show baton's parts, so a part in doubt that arrived is sent again),
 * "strip-note" (every fake stores a resend without its note, as if baton sent none) or
 * "forget-retry-keys" (LINE's retry key and Google Chat's request id are not remembered, so a
 * part sent again shows twice).
 */
export type Sabotage = "blind-read-backs" | "strip-note" | "forget-retry-keys";
