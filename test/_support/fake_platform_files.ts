// The fake platform's file API: Telegram's getFile and downloads, files served by path (Slack, Discord, WhatsApp, Twilio, Teams, Google Chat), rate limits and held downloads, for tests; Deno.

/**
 * A file served only to the right Authorization header (and query), perhaps through a redirect:
 * see `FakePlatform.serveAuthorizedFile`.
 */
export type AuthorizedFile = FakeFile & {
  authorization: string | RegExp;
  query?: Record<string, string>;
  redirect?: boolean;
};

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

/** A served file's download: its bytes, or its `status` (a failing download). */
function _fileBytes(file: FakeFile): Response {
  if (file.status) return new Response("Internal Server Error", { status: file.status });
  return new Response(file.bytes.slice(), {
    headers: { "content-type": "application/octet-stream" },
  });
}

/**
 * The files one fake platform serves, and its answers to their requests: the `serve*` methods of
 * `FakePlatform` (documented there) register them, `answer` serves them.
 */
export class FakeFileServer {
  /** The fake's origin, known only once its server listens: the URLs handed out are on it. */
  readonly #origin: () => string;
  /** Telegram's files, by file id: the bot token they are served to, and their `file_path`. */
  readonly #files = new Map<string, FakeFile & { token: string; path: string }>();
  /** Files served by path (`serveFile`, `serveWhatsappMedia`): who may read them, and the answer. */
  readonly #served = new Map<
    string,
    {
      bearer?: string;
      authorization?: string | RegExp;
      answer: (url: URL, req: Request) => Response | Promise<Response>;
    }
  >();
  /** The releases of held downloads (`FakeFile.hold`): a reset or close ends each. */
  readonly #holds = new Set<() => void>();

  /** A file server for the fake whose origin `origin` returns. */
  constructor(origin: () => string) {
    this.#origin = origin;
  }

  /**
   * A served file's download, held (`FakeFile.hold`) until its client is gone or a release. The
   * request's signal is read only for a hold: Deno warns of its legacy abort when it is read.
   */
  #answerFile(file: FakeFile, req: Request): Response | Promise<Response> {
    const limited = _rateLimited(file, "download");
    if (limited) return limited;
    if (!file.hold) return _fileBytes(file);
    return new Promise((resolve) => {
      const release = () => {
        this.#holds.delete(release);
        resolve(new Response("held", { status: 504 }));
      };
      this.#holds.add(release);
      req.signal.addEventListener("abort", release, { once: true });
    });
  }

  /**
   * Slack's, Discord's and WhatsApp's files, then Telegram's file API; null for any other path.
   * `body` is the request's, parsed (`getFile` names its file there).
   */
  answer(
    url: URL,
    body: unknown,
    headers: Headers,
    req: Request,
  ): Response | Promise<Response> | null {
    const hosted = this.#served.get(url.pathname);
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
      const file = typeof id === "string" ? this.#files.get(id) : undefined;
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
    const file = [...this.#files.values()].find((f) =>
      f.token === download[1] && f.path === decodeURIComponent(download[2])
    );
    if (!file) return new Response("Not Found", { status: 404 });
    return this.#answerFile(file, req);
  }

  /** See `FakePlatform.serveTelegramFile`. */
  serveTelegramFile(token: string, fileId: string, file: FakeFile): void {
    this.#files.set(fileId, { ...file, token, path: `files/${fileId}` });
  }

  /** See `FakePlatform.serveFile`. */
  serveFile(path: string, file: FakeFile & { bearer?: string }): string {
    this.#served.set(path, {
      ...(file.bearer !== undefined ? { bearer: file.bearer } : {}),
      answer: (_, req) => this.#answerFile(file, req),
    });
    return this.#origin() + path;
  }

  /** See `FakePlatform.serveWhatsappMedia`. */
  serveWhatsappMedia(token: string, mediaId: string, file: FakeFile & { type: string }): void {
    const path = `/whatsapp-media/${mediaId}`;
    this.#served.set(path, { bearer: token, answer: (_, req) => this.#answerFile(file, req) });
    this.#served.set(`/${mediaId}`, {
      bearer: token,
      answer: () =>
        Response.json({
          messaging_product: "whatsapp",
          url: this.#origin() + path,
          mime_type: file.type,
          sha256: "0".repeat(64),
          file_size: file.size ?? file.bytes.length,
          id: mediaId,
        }),
    });
  }

  /** See `FakePlatform.serveAuthorizedFile`. */
  serveAuthorizedFile(path: string, file: AuthorizedFile): string {
    const { authorization, query, redirect } = file;
    const cdn = `/cdn${path}`;
    if (redirect) this.#served.set(cdn, { answer: (_, req) => this.#answerFile(file, req) });
    this.#served.set(path, {
      authorization,
      answer: (url, req) => {
        const missing = Object.entries(query ?? {}).some(([k, v]) => url.searchParams.get(k) !== v);
        if (missing) return Response.json({ error: "bad query" }, { status: 400 });
        if (!redirect) return this.#answerFile(file, req);
        return new Response(null, { status: 307, headers: { location: this.#origin() + cdn } });
      },
    });
    return this.#origin() + path;
  }

  /** Answers every held download (its 504), so none keeps a reset or shutdown waiting. */
  releaseHolds(): void {
    for (const release of [...this.#holds]) release();
  }

  /** Back to serving nothing, for the next test: the holds released, every file forgotten. */
  reset(): void {
    this.releaseHolds();
    this.#served.clear();
    this.#files.clear();
  }
}
