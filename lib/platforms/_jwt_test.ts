// Unit tests of the JWT kit's access tokens: cached by the injected clock, refetched near expiry, failures never cached; Deno.
import { assert, assertEquals } from "@std/assert";
import { withFetch } from "./_fetch_stub.ts";
import { accessToken, resetJwtCaches, type TokenRequest } from "./_jwt.ts";

function _request(now: () => number): TokenRequest {
  return {
    cacheKey: "jwt_test https://login.example/token client-1",
    url: "https://login.example/token",
    form: () => Promise.resolve(new URLSearchParams({ client_secret: "cl13nt-s3cret" })),
    api: "token endpoint",
    secrets: ["cl13nt-s3cret"],
    now,
  };
}

Deno.test("accessToken() serves the cached token until 5 minutes before it expires, by the injected clock", async () => {
  resetJwtCaches();
  let now = 1_000_000_000_000;
  let issued = 0;
  await withFetch(
    () => Response.json({ access_token: `token-${++issued}`, expires_in: 3600 }),
    async (calls) => {
      const request = _request(() => now);
      assertEquals(await accessToken(request), { ok: true, token: "token-1" });
      now += 54 * 60 * 1000; // 6 minutes left: still served from the cache
      assertEquals(await accessToken(request), { ok: true, token: "token-1" });
      now += 2 * 60 * 1000; // 4 minutes left: renewed
      assertEquals(await accessToken(request), { ok: true, token: "token-2" });
      assertEquals(calls.length, 2);
    },
  );
  resetJwtCaches();
});

Deno.test("accessToken() words a refusal with the OAuth error code alone, and caches no failure", async () => {
  resetJwtCaches();
  await withFetch(
    (_call, index) =>
      index === 0
        ? Response.json({ error: "invalid_client", error_description: "cl13nt-s3cret" }, {
          status: 401,
        })
        : Response.json({ access_token: "fresh", expires_in: 3600 }),
    async (calls) => {
      const request = _request(Date.now);
      const refused = await accessToken(request);
      assertEquals(refused, {
        ok: false,
        status: 401,
        retryable: false,
        message: "the token endpoint answered 401: invalid_client",
      });
      assertEquals(await accessToken(request), { ok: true, token: "fresh" });
      assertEquals(calls.length, 2);
    },
  );
  resetJwtCaches();
});

Deno.test("accessToken() treats a token endpoint out of reach as retryable, naming no URL", async () => {
  resetJwtCaches();
  await withFetch(
    () => Promise.reject(new TypeError("connect failed: https://login.example/token")),
    async () => {
      const result = await accessToken(_request(Date.now));
      assertEquals(result, {
        ok: false,
        status: 0,
        retryable: true,
        message: "could not reach the token endpoint",
      });
      assert(!JSON.stringify(result).includes("login.example"));
    },
  );
  resetJwtCaches();
});
