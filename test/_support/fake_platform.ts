// Fake chat-platform HTTP API on loopback (Telegram, Slack, Discord, GitHub, WhatsApp, LINE, Twilio, Teams, Google Chat stand-in, with their key sets, token endpoints and file downloads) for tests; Deno.
import type { PlatformAnswer, PlatformCall } from "./fake_platform_call.ts";
import { type AuthorizedFile, type FakeFile, FakeFileServer } from "./fake_platform_files.ts";
import { FakeUploads, multipartFields, type UploadedFile } from "./fake_platform_uploads.ts";

export type { PlatformAnswer, PlatformCall } from "./fake_platform_call.ts";
export type { AuthorizedFile, FakeFile } from "./fake_platform_files.ts";
export type { UploadedFile } from "./fake_platform_uploads.ts";

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
  /**
   * Replaces the responder; the default answers 200 `{"ok":true,"result":{"message_id":N},"id":"N"}`,
   * but for the uploads it checks as the platforms do: Slack's file flow
   * (`files.getUploadURLExternal` form-encoded → the bytes to the upload URL it named →
   * `files.completeUploadExternal` of uploaded ids into a channel) and Discord's attachments
   * (every `payload_json` attachment id has its `files[id]`), refusing a wrong shape as they do.
   */
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
  /**
   * Serves `file` at `path` on the fake (GET) and returns its URL: with `file.bearer`, only to
   * `Authorization: Bearer <bearer>` (anything else 401), as Slack's `url_private` is; without, to
   * anyone, as Discord's CDN is. Calls are kept in `fileCalls`.
   */
  serveFile(path: string, file: FakeFile & { bearer?: string }): string;
  /**
   * Serves `file` as WhatsApp Cloud API media `mediaId` to the access token `token`: `GET /<id>`
   * answers its `url` (on the fake), `mime_type` and `file_size`, and that URL its bytes — both
   * with `Authorization: Bearer <token>` only (else 401, Graph's error shape).
   */
  serveWhatsappMedia(token: string, mediaId: string, file: FakeFile & { type: string }): void;
  /**
   * Serves `file` at `path` (GET) only to a request whose whole Authorization header is
   * `authorization` (a RegExp: matches it; anything else 401) and, with `query`, whose query has
   * those parameters (else 400): Twilio's basic auth, a token the fake's token endpoint sold
   * (Teams, Google Chat's `?alt=media`). With `redirect`, the answer is a 307 to a second path
   * that serves the bytes to anyone, as Twilio's media URL redirects to its CDN. Returns the URL.
   */
  serveAuthorizedFile(path: string, file: AuthorizedFile): string;
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
  const uploads = new FakeUploads();
  const _default = (call: PlatformCall, i: number): PlatformAnswer =>
    uploads.check(call, i, origin) ?? {
      status: 200,
      body: {
        ok: true,
        result: { message_id: i + 1 },
        id: String(i + 1),
        ts: `1700000000.${i + 1}`,
      },
    };
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
  const fileServer = new FakeFileServer(() => origin);
  const fileCalls: PlatformCall[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const multipart = /^multipart\/form-data/i.test(req.headers.get("content-type") ?? "");
    const raw = /^application\/octet-stream/i.test(req.headers.get("content-type") ?? "");
    const text = multipart || raw ? "" : await req.text();
    let body: unknown = text;
    if (raw) {
      body = {
        filename: new URL(req.url).pathname.split("/").pop() ?? "",
        type: "application/octet-stream",
        bytes: new Uint8Array(await req.arrayBuffer()),
      } satisfies UploadedFile;
    } else if (multipart) {
      body = await multipartFields(req);
    } else if (
      /^application\/x-www-form-urlencoded/i.test(req.headers.get("content-type") ?? "")
    ) {
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
    const filed = fileServer.answer(url, body, req.headers, req);
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
    serveTelegramFile: (token, fileId, file) => fileServer.serveTelegramFile(token, fileId, file),
    serveFile: (path, file) => fileServer.serveFile(path, file),
    serveWhatsappMedia: (token, mediaId, file) =>
      fileServer.serveWhatsappMedia(token, mediaId, file),
    serveAuthorizedFile: (path, file) => fileServer.serveAuthorizedFile(path, file),
    reset() {
      fileServer.reset();
      uploads.reset();
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
    close: () => {
      // A held download would keep the graceful shutdown waiting.
      fileServer.releaseHolds();
      return server.shutdown();
    },
  });
}
