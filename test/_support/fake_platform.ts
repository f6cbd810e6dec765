// Fake chat-platform HTTP API on loopback (Telegram, Slack, Discord, GitHub, WhatsApp, LINE, Twilio, Teams, Google Chat stand-in, with their key sets, token endpoints and file downloads) for tests; Deno.

/** One request the fake received. */
export interface PlatformCall {
  method: string;
  /** Path without the origin, e.g. "/botTOKEN/sendMessage". */
  path: string;
  headers: Headers;
  /**
   * JSON parsed; a form (Twilio) as an object of its fields; a multipart upload (Telegram's
   * `sendPhoto`, Discord's `files[0]`) as an object of its fields, each file an `UploadedFile`;
   * raw bytes (`application/octet-stream`: Slack's upload to its upload URL) as an `UploadedFile`
   * named by the path's last segment; else the text.
   */
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
  serveAuthorizedFile(
    path: string,
    file: FakeFile & {
      authorization: string | RegExp;
      query?: Record<string, string>;
      redirect?: boolean;
    },
  ): string;
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

/** A file a multipart call uploaded (a field of `PlatformCall.body`). */
export interface UploadedFile {
  filename: string;
  type: string;
  bytes: Uint8Array;
}

/** A multipart body as an object: text fields as strings, files as `UploadedFile`s. */
async function _multipart(req: Request): Promise<Record<string, string | UploadedFile>> {
  const fields: Record<string, string | UploadedFile> = {};
  for (const [key, value] of await req.formData()) {
    fields[key] = typeof value === "string" ? value : {
      filename: value.name,
      type: value.type,
      bytes: new Uint8Array(await value.arrayBuffer()),
    };
  }
  return fields;
}

/** A file the fake file API serves (see `FakePlatform.serveTelegramFile`). */
export interface FakeFile {
  bytes: Uint8Array;
  /** The size `getFile` states (default the bytes' length). */
  size?: number;
  /** The download's status instead of 200 and the bytes (e.g. 500). */
  status?: number;
  /**
   * The download is held: no answer until its client gives up (or the fake is reset or closed),
   * then a 504 nobody reads — a file server that never answers, for download deadlines.
   */
  hold?: boolean;
  /**
   * The first `times` requests for it — its download, or with `at: "lookup"` Telegram's `getFile`
   * for it — are answered 429 with `Retry-After: retryAfter` (none when absent): a platform that
   * asks the client to wait. With `bodyRetryAfter`, the wait is stated as Telegram's Bot API states
   * it, in the body: `"parameters": {"retry_after": N}` and "retry after N" in its description.
   * Counted down as they come.
   */
  rateLimit?: {
    times: number;
    at?: "lookup" | "download";
    retryAfter?: string;
    bodyRetryAfter?: number;
  };
}

/** A 429 for `file` while its `rateLimit` at `at` lasts (counting it down); null once it is over. */
function _rateLimited(file: FakeFile, at: "lookup" | "download"): Response | null {
  const limit = file.rateLimit;
  if (!limit || limit.times <= 0 || (limit.at ?? "download") !== at) return null;
  limit.times--;
  const seconds = limit.bodyRetryAfter;
  const body = seconds === undefined
    ? { ok: false, error_code: 429, description: "Too Many Requests: retry later" }
    : {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${seconds}`,
      parameters: { retry_after: seconds },
    };
  return Response.json(body, {
    status: 429,
    headers: limit.retryAfter ? { "retry-after": limit.retryAfter } : {},
  });
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

/** A served file's download: its bytes, or its `status` (a failing download). */
function _fileBytes(file: FakeFile): Response {
  if (file.status) return new Response("Internal Server Error", { status: file.status });
  return new Response(file.bytes.slice(), {
    headers: { "content-type": "application/octet-stream" },
  });
}

/** Starts a fake platform API on 127.0.0.1 with a random port. */
export function startFakePlatform(): Promise<FakePlatform> {
  const calls: PlatformCall[] = [];
  const signals: PlatformCall[] = [];
  let arrivals = 0;
  const _default = (call: PlatformCall, i: number): PlatformAnswer =>
    _checkUpload(call, i) ?? {
      status: 200,
      body: {
        ok: true,
        result: { message_id: i + 1 },
        id: String(i + 1),
        ts: `1700000000.${i + 1}`,
      },
    };
  /** Slack files reserved by `files.getUploadURLExternal`, by id: their stated length, and bytes once uploaded. */
  const slackFiles = new Map<string, { filename: string; length: number; bytes?: Uint8Array }>();
  /** The answer to an upload call of Slack's file flow or a Discord attachment; null for any other call. */
  const _checkUpload = (call: PlatformCall, i: number): PlatformAnswer | null => {
    const path = call.path.split("?")[0];
    const form = call.headers.get("content-type")?.startsWith("application/x-www-form-urlencoded");
    const slackError = (error: string) => ({ status: 200, body: { ok: false, error } });
    if (path === "/api/files.getUploadURLExternal") {
      if (!/^Bearer \S+/.test(call.headers.get("authorization") ?? "")) {
        return slackError("not_authed");
      }
      // Slack refuses a JSON body here ("missing required field" though both are present).
      const length = Number(call.body?.length);
      if (!form || !call.body?.filename || !Number.isSafeInteger(length) || length <= 0) {
        return slackError("invalid_arguments");
      }
      const id = `F${i + 1}UP`;
      slackFiles.set(id, { filename: call.body.filename, length });
      return {
        status: 200,
        body: { ok: true, upload_url: `${origin}/slack-upload/${id}`, file_id: id },
      };
    }
    const upload = /^\/slack-upload\/([^/]+)$/.exec(path);
    if (upload) {
      const file = slackFiles.get(upload[1]);
      const bytes = (call.body as UploadedFile | undefined)?.bytes;
      if (!file || !bytes || bytes.length !== file.length) {
        return { status: 400, body: { error: "upload does not match its reservation" } };
      }
      file.bytes = bytes;
      return { status: 200, body: `OK - ${bytes.length}` };
    }
    if (path === "/api/files.completeUploadExternal") {
      let files: { id?: unknown }[] = [];
      try {
        files = JSON.parse(call.body?.files ?? "[]");
      } catch { /* refused below */ }
      if (!form || !Array.isArray(files) || files.length === 0 || !call.body?.channel_id) {
        return slackError("invalid_arguments");
      }
      if (files.some((f) => !slackFiles.get(String(f.id))?.bytes)) {
        return slackError("file_not_found");
      }
      return { status: 200, body: { ok: true, files: files.map((f) => ({ id: f.id })) } };
    }
    const payload = typeof call.body?.payload_json === "string" ? call.body.payload_json : null;
    if (payload && /^\/webhooks\//.test(path)) {
      const attachments = JSON.parse(payload).attachments ?? [];
      const whole = attachments.every((a: { id: number }) =>
        typeof call.body[`files[${a.id}]`] === "object"
      );
      if (!whole) {
        return { status: 400, body: { code: 50035, message: "Invalid Form Body" } };
      }
    }
    return null;
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
  const files = new Map<string, FakeFile & { token: string; path: string }>();
  const fileCalls: PlatformCall[] = [];
  /** Files served by path (`serveFile`, `serveWhatsappMedia`): who may read them, and the answer. */
  const served = new Map<
    string,
    {
      bearer?: string;
      authorization?: string | RegExp;
      answer: (url: URL, req: Request) => Response | Promise<Response>;
    }
  >();
  /** The releases of held downloads (`FakeFile.hold`): a reset or close ends each. */
  const holds = new Set<() => void>();
  /**
   * A served file's download, held (`FakeFile.hold`) until its client is gone or a release. The
   * request's signal is read only for a hold: Deno warns of its legacy abort when it is read.
   */
  const answerFile = (file: FakeFile, req: Request): Response | Promise<Response> => {
    const limited = _rateLimited(file, "download");
    if (limited) return limited;
    if (!file.hold) return _fileBytes(file);
    return new Promise((resolve) => {
      const release = () => {
        holds.delete(release);
        resolve(new Response("held", { status: 504 }));
      };
      holds.add(release);
      req.signal.addEventListener("abort", release, { once: true });
    });
  };
  /** Slack's, Discord's and WhatsApp's files, then Telegram's file API; null for any other path. */
  const fileAnswer = (
    url: URL,
    body: unknown,
    headers: Headers,
    req: Request,
  ): Response | Promise<Response> | null => {
    const hosted = served.get(url.pathname);
    if (hosted) {
      if (
        hosted.bearer !== undefined && headers.get("authorization") !== `Bearer ${hosted.bearer}`
      ) {
        return Response.json({
          error: { message: "Invalid OAuth access token.", type: "OAuthException", code: 190 },
        }, { status: 401 });
      }
      if (hosted.authorization !== undefined) {
        const given = headers.get("authorization") ?? "";
        const ok = typeof hosted.authorization === "string"
          ? given === hosted.authorization
          : hosted.authorization.test(given);
        if (!ok) return Response.json({ message: "Authentication Error" }, { status: 401 });
      }
      return hosted.answer(url, req);
    }
    const getFile = _TG_GET_FILE.exec(url.pathname);
    if (getFile) {
      const id = (body as { file_id?: unknown } | undefined)?.file_id;
      const file = typeof id === "string" ? files.get(id) : undefined;
      if (file && file.token !== getFile[1]) {
        return Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, {
          status: 401,
        });
      }
      const limited = file && _rateLimited(file, "lookup");
      if (limited) return limited;
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
    return answerFile(file, req);
  };
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
      body = await _multipart(req);
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
    const filed = fileAnswer(url, body, req.headers, req);
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
    serveFile(path, file) {
      served.set(path, {
        ...(file.bearer !== undefined ? { bearer: file.bearer } : {}),
        answer: (_, req) => answerFile(file, req),
      });
      return origin + path;
    },
    serveWhatsappMedia(token, mediaId, file) {
      const path = `/whatsapp-media/${mediaId}`;
      served.set(path, { bearer: token, answer: (_, req) => answerFile(file, req) });
      served.set(`/${mediaId}`, {
        bearer: token,
        answer: () =>
          Response.json({
            messaging_product: "whatsapp",
            url: origin + path,
            mime_type: file.type,
            sha256: "0".repeat(64),
            file_size: file.size ?? file.bytes.length,
            id: mediaId,
          }),
      });
    },
    serveAuthorizedFile(path, file) {
      const { authorization, query, redirect } = file;
      const cdn = `/cdn${path}`;
      if (redirect) served.set(cdn, { answer: (_, req) => answerFile(file, req) });
      served.set(path, {
        authorization,
        answer: (url, req) => {
          const missing = Object.entries(query ?? {}).some(([k, v]) =>
            url.searchParams.get(k) !== v
          );
          if (missing) return Response.json({ error: "bad query" }, { status: 400 });
          if (!redirect) return answerFile(file, req);
          return new Response(null, { status: 307, headers: { location: origin + cdn } });
        },
      });
      return origin + path;
    },
    reset() {
      for (const release of [...holds]) release();
      slackFiles.clear();
      served.clear();
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
    close: () => {
      // A held download would keep the graceful shutdown waiting.
      for (const release of [...holds]) release();
      return server.shutdown();
    },
  });
}
