// Downloads a medium's bytes over HTTP for a turn: fetchOut's deadline, at most MEDIA_MAX_BYTES read, failures worded without URL or token; runtime-neutral (fetch).
import {
  errorText,
  fetchOut,
  HTTP_OUT_TIMEOUT_MS,
  RATE_LIMIT_WAIT_OUT,
  redact,
  type WaitOut,
} from "../runtime/mod.ts";
import type { FetchFn } from "../runtime/http_out.ts";
import type { FetchedMedia } from "./platform_media.ts";

/** How one download is made. */
export interface DownloadOptions {
  /** The server as a failure names it ("the download failed: the <api> answered 500"). */
  api: string;
  /** `MEDIA_MAX_BYTES`: a longer body is not read past it. */
  maxBytes: number;
  /** The turn's signal: a stopped turn stops its download. */
  signal: AbortSignal;
  /** Values never to appear in a failure (a token in the URL). */
  secrets?: readonly string[];
  /** The fetch to use (tests); the global one by default. */
  fetch?: FetchFn;
  /** How a 429 is waited out (where the server states its wait); `RATE_LIMIT_WAIT_OUT` by default. */
  waitOut?: WaitOut;
}

/**
 * GETs `url` (with `init`'s headers) and reads at most `maxBytes` of it: the bytes, or why not —
 * no answer in time, a non-2xx status, a body over the cap (stopped as soon as it is). A 429 (or
 * 503 with Retry-After) is waited out and asked again (`options.waitOut`). Never throws but
 * for the turn's own abort.
 */
export async function downloadMedia(
  url: string,
  init: RequestInit,
  options: DownloadOptions,
): Promise<FetchedMedia> {
  const secrets = options.secrets ?? [];
  try {
    const res = await fetchOut(url, { ...init, signal: options.signal }, {
      api: options.api,
      timeoutMs: HTTP_OUT_TIMEOUT_MS,
      secrets,
      // A file server's 429 asks for a wait, not a refusal: the turn's deadline still bounds it.
      waitOut: options.waitOut ?? RATE_LIMIT_WAIT_OUT,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { ok: false, why: `download failed: the ${options.api} answered ${res.status}` };
    }
    const bytes = await readCapped(res, options.maxBytes);
    if (!bytes) return { ok: false, why: overLimit(options.maxBytes) };
    return { ok: true, bytes };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason;
    return {
      ok: false,
      why: `download failed: ${redact(errorText(error), secrets).slice(0, 200)}`,
    };
  }
}

/** The reason a medium over the cap is not read. */
export function overLimit(maxBytes: number): string {
  return `it is over the ${maxBytes}-byte limit, MEDIA_MAX_BYTES`;
}

/** The reason a medium whose fetch took longer than `MEDIA_DOWNLOAD_TIMEOUT_MS` is not read. */
export function downloadTimedOut(timeoutMs: number): string {
  const seconds = Math.round(timeoutMs / 100) / 10;
  return `download failed: no answer within ${seconds} s, MEDIA_DOWNLOAD_TIMEOUT_MS`;
}

/** The body of `res`, or null as soon as it is longer than `max` bytes (the rest never read). */
export async function readCapped(res: Response, max: number): Promise<Uint8Array | null> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    return null;
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
