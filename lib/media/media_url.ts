// Signed, expiring links to a stored medium (`GET /media/{id}?exp=…&sig=…`, HMAC-SHA256 under MEDIA_URL_SECRET): made for platforms and API clients that fetch files by URL, checked by the route; runtime-neutral (Web Crypto).
import { constantTimeEquals, encodeHex, hmacSign } from "../runtime/mod.ts";

/** How long a link works: a day, long enough for a platform to fetch it and a client to save it. */
export const MEDIA_URL_TTL_SECONDS = 24 * 60 * 60;

/** A medium's id as the store names it (`mediaKey`): two hex segments. */
const _ID = /^[0-9a-f]{8,64}\/[0-9a-f]{8,64}$/;

/** What the signature covers: the id and the expiry, so neither can be changed alone. */
function _signed(id: string, exp: number): string {
  return `baton-media:${id}:${exp}`;
}

/**
 * The signed link to medium `id` under `base` (`PUBLIC_URL`, or the origin a request came to),
 * valid until `nowSeconds + ttlSeconds`; `name` (the file's) is only a hint for the client's save
 * dialog and is not signed.
 */
export async function mediaFileUrl(
  base: string,
  secret: string,
  id: string,
  nowSeconds: number,
  ttlSeconds: number = MEDIA_URL_TTL_SECONDS,
): Promise<string> {
  const exp = Math.floor(nowSeconds) + ttlSeconds;
  const sig = encodeHex(await hmacSign(secret, _signed(id, exp)));
  return `${base.replace(/\/+$/, "")}/media/${id}?exp=${exp}&sig=${sig}`;
}

/**
 * Whether a link's `id`, `exp` and `sig` are one `mediaFileUrl` made and it has not expired:
 * "ok", or why not ("malformed", "expired", "bad_signature"). The signature is compared in
 * constant time; every refusal is the route's 403.
 */
export async function verifyMediaUrl(
  secret: string,
  id: string,
  exp: string | null,
  sig: string | null,
  nowSeconds: number,
): Promise<"ok" | "malformed" | "expired" | "bad_signature"> {
  if (!_ID.test(id) || !exp || !/^[0-9]{1,12}$/.test(exp) || !sig || !/^[0-9a-f]{64}$/.test(sig)) {
    return "malformed";
  }
  const expected = encodeHex(await hmacSign(secret, _signed(id, Number(exp))));
  if (!(await constantTimeEquals(expected, sig))) return "bad_signature";
  return Number(exp) < nowSeconds ? "expired" : "ok";
}

/**
 * The signed link maker of a deployment's `mediaLinks` (`MEDIA_URL_SECRET` under `PUBLIC_URL`):
 * null without the secret or without a public URL to put the links under (a chat platform must
 * be able to reach them).
 */
export function mediaLinker(
  links: { secret: string; publicUrl: string } | null,
  now: () => number = Date.now,
): ((file: { id: string }) => Promise<string>) | null {
  if (!links?.secret || !/^https?:\/\//i.test(links.publicUrl)) return null;
  return (file) => mediaFileUrl(links.publicUrl, links.secret, file.id, now() / 1000);
}
