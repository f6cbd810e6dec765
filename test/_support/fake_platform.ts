// Fake chat-platform HTTP API on loopback (Telegram, Slack, Discord, GitHub, WhatsApp, LINE, Twilio, Teams, Google Chat stand-in, with their key sets and token endpoints) for tests; Deno.

/** One request the fake received. */
export interface PlatformCall {
  method: string;
  /** Path without the origin, e.g. "/botTOKEN/sendMessage". */
  path: string;
  headers: Headers;
  /** JSON parsed; a form (Twilio) as an object of its fields; else the text. */
  // deno-lint-ignore no-explicit-any
  body: any;
  /** Arrival order across `calls` and `signals`. */
  order: number;
}

/** What the fake answers to one call. */
export interface PlatformAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Handle on a running fake platform API. */
export interface FakePlatform {
  /** Origin to use as the platform's API root, e.g. "http://127.0.0.1:PORT". */
  url: string;
  /** Every call, in arrival order, but the presence signals. */
  calls: PlatformCall[];
  /**
   * Presence and previews, which never carry the reply itself: Telegram's typing action and
   * drafts, Slack's assistant status. Kept apart so the reply calls stay countable.
   */
  signals: PlatformCall[];
  /** Replaces the responder; the default answers 200 `{"ok":true,"result":{"message_id":N},"id":"N"}`. */
  respond(
    fn: (call: PlatformCall, index: number) => PlatformAnswer | Promise<PlatformAnswer>,
  ): void;
  /**
   * Calls to the identity side under `/auth/` (Teams' OpenID metadata, the key set both Teams and
   * Google Chat verify with, their OAuth token endpoints), kept apart like the signals.
   */
  auth: PlatformCall[];
  /**
   * The key set served at `/auth/jwks` (and named by `/auth/teams/openid`): tests put the public
   * JWKs of the keys they sign with here.
   */
  jwks: { keys: unknown[] };
  /**
   * Replaces the responder of `/auth/` calls (the default serves metadata, `jwks` and tokens), and
   * hands `fn` that default, so it can fail some calls and serve the rest as usual.
   */
  respondToAuth(
    fn: (
      call: PlatformCall,
      index: number,
      usual: (call: PlatformCall, index: number) => PlatformAnswer,
    ) => PlatformAnswer | Promise<PlatformAnswer>,
  ): void;
  /** Replaces the responder of presence signals (their index counts signals only). */
  respondToSignals(
    fn: (call: PlatformCall, index: number) => PlatformAnswer | Promise<PlatformAnswer>,
  ): void;
  /** Resolves once `calls.length >= n` (10 s at most). */
  waitForCalls(n: number): Promise<void>;
  /**
   * Serves `file` as Telegram's file `fileId` to the bot `token`: `getFile` (the token in its path,
   * as Telegram has it; another token is 401, an unknown id 400) answers its `file_path`, and
   * `/file/bot<token>/<file_path>` its bytes — or `file.status` (a failing download). Calls to
   * either are kept in `fileCalls`, apart from the reply calls.
   */
  serveTelegramFile(token: string, fileId: string, file: FakeFile): void;
  /** The file API's calls (`getFile`, downloads), in arrival order. */
  fileCalls: PlatformCall[];
  /**
   * Back to a fresh fake for the next test on a shared Worker: the records (`calls`, `signals`,
   * `auth`) emptied and every responder back to its default. The published keys (`jwks`) stay:
   * the Worker caches the key sets it fetched.
   */
  reset(): void;
  close(): Promise<void>;
}

/** A file the fake file API serves (see `FakePlatform.serveTelegramFile`). */
export interface FakeFile {
  bytes: Uint8Array;
  /** The size `getFile` states (default the bytes' length). */
  size?: number;
  /** The download's status instead of 200 and the bytes (e.g. 500). */
  status?: number;
}

/** Telegram's file API on the fake: `getFile` under the bot's token, the download beneath `/file/`. */
const _TG_GET_FILE = /^\/bot([^/]+)\/getFile$/;
const _TG_DOWNLOAD = /^\/file\/bot([^/]+)\/(.+)$/;

/** The paths of presence signals (see `FakePlatform.signals`). */
const _SIGNAL =
  /\/(sendChatAction|sendMessageDraft|assistant\.threads\.setStatus|chat\/loading\/start)$/;

/**
 * Whether a call is a presence signal: one of `_SIGNAL`'s paths (Telegram, Slack, LINE's loading
 * animation), or a body that says so where the platform shares its message path (WhatsApp's
 * `typing_indicator`, a Bot Framework `typing` activity).
 */
function _isSignal(pathname: string, body: unknown): boolean {
  if (_SIGNAL.test(pathname)) return true;
  if (typeof body !== "object" || body === null) return false;
  const fields = body as Record<string, unknown>;
  return "typing_indicator" in fields || fields.type === "typing";
}

/** Starts a fake platform API on 127.0.0.1 with a random port. */
export function startFakePlatform(): Promise<FakePlatform> {
  const calls: PlatformCall[] = [];
  const signals: PlatformCall[] = [];
  let arrivals = 0;
  const _default = (_: PlatformCall, i: number): PlatformAnswer => ({
    status: 200,
    body: { ok: true, result: { message_id: i + 1 }, id: String(i + 1), ts: `1700000000.${i + 1}` },
  });
  let responder: (call: PlatformCall, index: number) => PlatformAnswer | Promise<PlatformAnswer> =
    _default;
  let signalResponder = responder;
  const auth: PlatformCall[] = [];
  const jwks: { keys: unknown[] } = { keys: [] };
  let origin = "";
  const _defaultAuth = (call: PlatformCall, i: number): PlatformAnswer => {
    const path = call.path.split("?")[0];
    if (path === "/auth/teams/openid") {
      return {
        status: 200,
        body: {
          issuer: "https://api.botframework.com",
          jwks_uri: `${origin}/auth/jwks`,
          id_token_signing_alg_values_supported: ["RS256"],
        },
      };
    }
    if (path === "/auth/jwks") return { status: 200, body: jwks };
    if (path.endsWith("/token")) {
      return {
        status: 200,
        body: {
          token_type: "Bearer",
          expires_in: 3600,
          access_token: `fake-access-token-${i + 1}`,
        },
      };
    }
    return { status: 404, body: { error: "not_found" } };
  };
  let authResponder: (
    call: PlatformCall,
    index: number,
  ) => PlatformAnswer | Promise<PlatformAnswer> = _defaultAuth;
  const files = new Map<string, FakeFile & { token: string; path: string }>();
  const fileCalls: PlatformCall[] = [];
  /** Telegram's file API, or null for any other path. */
  const fileAnswer = (url: URL, body: unknown): Response | null => {
    const getFile = _TG_GET_FILE.exec(url.pathname);
    if (getFile) {
      const id = (body as { file_id?: unknown } | undefined)?.file_id;
      const file = typeof id === "string" ? files.get(id) : undefined;
      if (file && file.token !== getFile[1]) {
        return Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, {
          status: 401,
        });
      }
      if (!file) {
        return Response.json(
          { ok: false, error_code: 400, description: "Bad Request: invalid file_id" },
          { status: 400 },
        );
      }
      return Response.json({
        ok: true,
        result: {
          file_id: id,
          file_unique_id: `u-${id}`,
          file_size: file.size ?? file.bytes.length,
          file_path: file.path,
        },
      });
    }
    const download = _TG_DOWNLOAD.exec(url.pathname);
    if (!download) return null;
    const file = [...files.values()].find((f) =>
      f.token === download[1] && f.path === decodeURIComponent(download[2])
    );
    if (!file) return new Response("Not Found", { status: 404 });
    if (file.status) return new Response("Internal Server Error", { status: file.status });
    return new Response(file.bytes.slice(), {
      headers: { "content-type": "application/octet-stream" },
    });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const text = await req.text();
    let body: unknown = text;
    if (/^application\/x-www-form-urlencoded/i.test(req.headers.get("content-type") ?? "")) {
      body = Object.fromEntries(new URLSearchParams(text));
    } else {
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
    }
    const url = new URL(req.url);
    const call = {
      order: arrivals++,
      method: req.method,
      path: url.pathname + url.search,
      headers: req.headers,
      body,
    };
    const filed = fileAnswer(url, body);
    if (filed) {
      fileCalls.push(call);
      return filed;
    }
    const signal = _isSignal(url.pathname, body);
    const answer = url.pathname.startsWith("/auth/")
      ? await authResponder(call, auth.push(call) - 1)
      : signal
      ? await signalResponder(call, signals.push(call) - 1)
      : await responder(call, calls.push(call) - 1);
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { "content-type": "application/json", ...answer.headers },
    });
  });
  const addr = server.addr as Deno.NetAddr;
  origin = `http://127.0.0.1:${addr.port}`;
  return Promise.resolve({
    url: origin,
    calls,
    signals,
    auth,
    jwks,
    respondToAuth: (fn) => {
      authResponder = (call, index) => fn(call, index, _defaultAuth);
    },
    respond: (fn) => {
      responder = fn;
    },
    respondToSignals: (fn) => {
      signalResponder = fn;
    },
    fileCalls,
    serveTelegramFile(token, fileId, file) {
      files.set(fileId, { ...file, token, path: `files/${fileId}` });
    },
    reset() {
      files.clear();
      fileCalls.length = 0;
      calls.length = 0;
      signals.length = 0;
      auth.length = 0;
      responder = _default;
      signalResponder = _default;
      authResponder = _defaultAuth;
    },
    async waitForCalls(n) {
      const deadline = Date.now() + 10_000;
      while (calls.length < n) {
        if (Date.now() > deadline) throw new Error(`fake platform: ${calls.length} of ${n} calls`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () => server.shutdown(),
  });
}
