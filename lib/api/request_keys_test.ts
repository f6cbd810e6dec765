// Unit tests for lib/api/request_keys.ts; Deno.
import { assertEquals } from "@std/assert";
import { claimRequestKey, IDEMPOTENCY_MS, type KeyStorage } from "./request_keys.ts";

function memory(): KeyStorage {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    put: <T>(key: string, value: T) => void map.set(key, value),
  };
}

Deno.test("claimRequestKey() keeps a key for its first request for a day, then lets it go", () => {
  const storage = memory();
  assertEquals(claimRequestKey(storage, "a", 0), true);
  assertEquals(claimRequestKey(storage, "a", 1_000), true, "the same request again");
  assertEquals(claimRequestKey(storage, "b", 2_000), false, "another request: refused");
  assertEquals(claimRequestKey(storage, "b", IDEMPOTENCY_MS + 1), true, "expired: free again");
  assertEquals(claimRequestKey(storage, "a", IDEMPOTENCY_MS + 2), false);
});
