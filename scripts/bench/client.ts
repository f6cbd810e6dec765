// Bench HTTP client: timed chat completions (JSON and SSE) that check the echoed reply, and stats; Deno.

/** One request's result: wall time, and whether it was a 200 whose reply echoed the input. */
export interface Sample {
  ms: number;
  ok: boolean;
  /** What went wrong (status and body), when not ok. */
  error?: string;
}

/** A streamed request's result; `firstChunkMs` is the time to the first non-empty content delta. */
export interface StreamSample extends Sample {
  firstChunkMs: number;
}

/** The parts of a chat completion (or chunk) the bench reads. */
interface _Completion {
  choices?: { message?: { content?: unknown }; delta?: { content?: unknown } }[];
  error?: unknown;
}

function _body(text: string, stream: boolean): string {
  return JSON.stringify({
    model: "any",
    messages: [{ role: "user", content: text }],
    ...(stream ? { stream: true } : {}),
  });
}

/**
 * An HTTP client that keeps no idle connection: each request gets a connection of its own. For
 * bursts of hundreds of requests at once: with the default pool, 1–7 of the fan-out's 1,000 (in
 * nearly every run with the baseline beside it) were written onto a kept-alive connection as
 * local workerd closed it, and failed with "Connection reset by peer" 7–15 s in; with this client,
 * none in 6,000.
 */
export function unpooledClient(): Deno.HttpClient {
  return _unpooled ??= Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
}
let _unpooled: Deno.HttpClient | undefined;

/**
 * POSTs a one-message chat completion to `url` and checks that the reply echoes `text`; `client`
 * (e.g. `unpooledClient()`) instead of fetch's own.
 */
export async function postChat(
  url: string,
  headers: Record<string, string>,
  text: string,
  client?: Deno.HttpClient,
): Promise<Sample> {
  const t0 = performance.now();
  try {
    const init = {
      method: "POST",
      headers,
      body: _body(text, false),
      ...(client ? { client } : {}),
    };
    const res = await fetch(url, init);
    const body = await res.json().catch(() => null) as _Completion | null;
    const ms = performance.now() - t0;
    const ok = res.status === 200 && body?.choices?.[0]?.message?.content === text;
    return ok ? { ms, ok } : { ms, ok, error: `${res.status} ${JSON.stringify(body)}` };
  } catch (error) {
    const ms = performance.now() - t0;
    return { ms, ok: false, error: `fetch failed after ${Math.round(ms)} ms: ${_cause(error)}` };
  }
}

/** An error with its causes: a failed fetch says why only in `cause` (a refused or reset connection). */
function _cause(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 4; e = (e as Error)?.cause) {
    parts.push(String(e));
  }
  return parts.join(" ← ");
}

/**
 * POSTs a streamed chat completion to `url` and reads the SSE to `[DONE]`; ok when the content
 * deltas join to `text`.
 */
export async function postChatStream(
  url: string,
  headers: Record<string, string>,
  text: string,
): Promise<StreamSample> {
  const t0 = performance.now();
  let firstChunkMs = NaN, content = "", done = false, status = 0, buffer = "", error = "";
  try {
    const res = await fetch(url, { method: "POST", headers, body: _body(text, true) });
    status = res.status;
    const decoder = new TextDecoder();
    for await (const bytes of res.body ?? []) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split("\n").filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trimStart()).join("\n");
        if (!data) continue;
        if (data === "[DONE]") {
          done = true;
          continue;
        }
        const chunk = JSON.parse(data) as _Completion;
        if (chunk.error) error ||= data;
        const delta = chunk.choices?.[0]?.delta?.content;
        if (typeof delta === "string" && delta) {
          if (!content) firstChunkMs = performance.now() - t0;
          content += delta;
        }
      }
    }
  } catch (e) {
    error ||= String(e);
  }
  const ok = status === 200 && done && !error && content === text;
  const ms = performance.now() - t0;
  if (ok) return { ms, ok, firstChunkMs };
  error = `stream ${status}, done ${done}, content ${JSON.stringify(content)} ${error}`;
  return { ms, ok, firstChunkMs, error };
}

/** Nearest-rank percentile of `values` (p in 0..1). */
export function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** Runs `fn(0..n-1)` with at most `concurrency` in flight. */
export async function pool<T>(
  n: number,
  concurrency: number,
  fn: (i: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, lane));
  return out;
}

/** How many of `samples` succeeded. */
export function okCount(samples: Sample[]): number {
  return samples.filter((s) => s.ok).length;
}
