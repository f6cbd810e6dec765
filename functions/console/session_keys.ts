// Session keys as the console reads them: which are the tenant's API sessions it can chat in; browser and Deno.

/** The runs API session id of key `key` (`api:<id>`, `api.<tenant>:<id>`), or null for a platform session. */
export function apiSessionId(key: string): string | null {
  const match = /^api(?:\.[A-Za-z0-9_-]+)?:(.+)$/.exec(key);
  return match ? match[1] : null;
}

/** A new conversation's session id: random, in the runs API's alphabet. */
export function newSessionId(): string {
  return `console-${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}
