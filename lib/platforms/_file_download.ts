// Downloads of a chat platform's file links with its credentials, only ever on the platform's own hosts (redirects followed by hand, each hop checked); runtime-neutral (fetch).
import { downloadMedia, type FetchedMedia, type PlatformMediaKind } from "../media/mod.ts";
import type { FetchFn } from "../runtime/http_out.ts";

/** How many redirects a file download follows. */
const _MAX_HOPS = 3;

/** What a download of a platform's file link needs. */
export interface HostedDownload {
  /** The server as a failure names it ("the Slack file server answered 500"). */
  api: string;
  /**
   * The hosts (and their subdomains) a link may point at, over https: a credential is never sent
   * anywhere else, even where a redirect points.
   */
  hosts: readonly string[];
  /** The adapter's API root (`SLACK_API_ROOT`…): its origin is trusted too (a self-hosted stand-in, tests). */
  root: string;
  /** Headers sent on every hop (the credential). */
  headers?: Record<string, string>;
  maxBytes: number;
  signal: AbortSignal;
  /** Values never to appear in a failure. */
  secrets?: readonly string[];
}

/**
 * Whether `url` is on one of `hosts` (or a subdomain) over https, or on `root`'s origin. A link
 * elsewhere is refused before any request: the signed delivery names it, but a credential is sent
 * only where the platform serves files.
 */
export function onPlatformHosts(url: string, hosts: readonly string[], root: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  try {
    if (parsed.origin === new URL(root).origin) return true;
  } catch {
    // An unusable root trusts nothing more.
  }
  if (parsed.protocol !== "https:") return false;
  const host = parsed.hostname.toLowerCase();
  return hosts.some((h) => host === h || host.endsWith(`.${h}`));
}

/**
 * GETs a platform's file link within `maxBytes` (`downloadMedia`: the deadline, the cap, no URL or
 * secret in a failure). The link must be on the platform's hosts; a redirect is followed by hand,
 * at most three times, and only onto those hosts — the credential in `headers` never leaves them.
 */
export async function downloadFromPlatform(
  url: string,
  options: HostedDownload,
): Promise<FetchedMedia> {
  if (!onPlatformHosts(url, options.hosts, options.root)) {
    return { ok: false, why: `download failed: the link is not on the ${options.api}` };
  }
  const follow: FetchFn = async (input, init) => {
    let at = String(input);
    for (let hop = 0;; hop++) {
      const res = await fetch(at, { ...init, redirect: "manual" });
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || location === null) return res;
      await res.body?.cancel();
      const next = new URL(location, at).href;
      // Refused as the redirect it is: "the … answered 302".
      if (hop >= _MAX_HOPS || !onPlatformHosts(next, options.hosts, options.root)) {
        return new Response(null, { status: res.status });
      }
      at = next;
    }
  };
  return await downloadMedia(url, { headers: options.headers ?? {} }, {
    api: options.api,
    maxBytes: options.maxBytes,
    signal: options.signal,
    secrets: options.secrets ?? [],
    fetch: follow,
  });
}

/** A stated MIME type without its parameters, lower case ("audio/ogg; codecs=opus" → "audio/ogg"). */
export function bareType(type: string | undefined | null): string | undefined {
  const bare = (type ?? "").split(";")[0].trim().toLowerCase().slice(0, 128);
  return bare || undefined;
}

/**
 * The kind a file is announced as by its stated type: an image a photo, audio a voice note (when
 * the platform says it was recorded as one) or an audio file, a video a video, anything else a
 * document (its bytes decide what it is read as).
 */
export function kindOfType(type: string | undefined, voice = false): PlatformMediaKind {
  if (type?.startsWith("image/")) return "photo";
  if (type?.startsWith("audio/")) return voice ? "voice" : "audio";
  if (type?.startsWith("video/")) return "video";
  return "document";
}
