// The console's client of baton's HTTP API: the key as a bearer header (never in a URL), JSON errors as ApiError; browser.

/** An API answer that was not a success, with the `{error:{message,type}}` the Worker sent. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly type: string) {
    super(message);
  }
}

/** Calls the API of the page's own origin with one API key. */
export class ApiClient {
  constructor(readonly key: string) {}

  /** GET `path` as JSON. */
  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.#json<T>(path, { signal });
  }

  /** POST `body` to `path` as JSON; `headers` add to the key's. */
  post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.#json<T>(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  }

  /** DELETE `path`, its JSON answer. */
  delete<T>(path: string): Promise<T> {
    return this.#json<T>(path, { method: "DELETE" });
  }

  /** GET `path` as bytes (an image or file), typed as the Worker typed them. */
  async blob(path: string, signal?: AbortSignal): Promise<Blob> {
    const res = await this.#fetch(path, { signal });
    if (!res.ok) throw await _error(res);
    return await res.blob();
  }

  /** Opens a streaming GET (a run's events); the caller reads the body. */
  async stream(path: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const res = await this.#fetch(path, { signal, headers: { accept: "text/event-stream" } });
    if (!res.ok || !res.body) throw await _error(res);
    return res.body;
  }

  async #json<T>(path: string, init: RequestInit): Promise<T> {
    const res = await this.#fetch(path, init);
    if (!res.ok) throw await _error(res);
    return await res.json() as T;
  }

  #fetch(path: string, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${this.key}`);
    return fetch(path, { ...init, headers, cache: "no-store" });
  }
}

async function _error(res: Response): Promise<ApiError> {
  try {
    const body = await res.json() as { error?: { message?: string; type?: string } };
    if (body.error?.message) {
      return new ApiError(res.status, body.error.message, body.error.type ?? "error");
    }
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  return new ApiError(res.status, `HTTP ${res.status}`, "error");
}

/** The message of any error, for showing it. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.status})`;
  return error instanceof Error ? error.message : String(error);
}
