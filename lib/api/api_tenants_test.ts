// Unit tests for lib/api/api_tenants.ts: key lists, key lookup, tenant session keys and who may address them; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import {
  DEFAULT_TENANT,
  mayAddressSession,
  parseTenantKeys,
  tenantOfKey,
  tenantOfSessionKey,
  tenantPrefix,
  tenantSessionKey,
} from "./api_tenants.ts";

Deno.test("parseTenantKeys() puts GATEWAY_API_KEY first as tenant default, then each trimmed name:key", () => {
  assertEquals(parseTenantKeys("k0", " acme : k1 ,beta:k2"), [
    { name: DEFAULT_TENANT, key: "k0" },
    { name: "acme", key: "k1" },
    { name: "beta", key: "k2" },
  ]);
  assertEquals(parseTenantKeys("", "acme:k1"), [{ name: "acme", key: "k1" }], "no default key");
  assertEquals(parseTenantKeys("", ""), []);
});

Deno.test("parseTenantKeys() splits at the first colon: a key may hold colons", () => {
  assertEquals(parseTenantKeys("", "acme:sk:a:b"), [{ name: "acme", key: "sk:a:b" }]);
});

Deno.test("parseTenantKeys() skips entries without a valid name or key, and a name seen before", () => {
  const keys = parseTenantKeys(
    "k0",
    [
      "nocolon",
      "bad name:k1",
      "a.b:k2", // a dot would blur the `api.<name>:` prefixes
      "-lead:k3",
      `${"x".repeat(33)}:k4`,
      "empty:",
      ":k5",
      "default:k6", // GATEWAY_API_KEY already is `default`
      "ok_1-2:k7",
      "ok_1-2:k8",
    ].join(","),
  );
  assertEquals(keys.map((k) => `${k.name}:${k.key}`), ["default:k0", "ok_1-2:k7"]);
});

Deno.test("tenantOfKey() names the tenant of an exact key, null for anything else", async () => {
  const keys = parseTenantKeys("k0", "acme:secret-a,beta:secret-b");
  assertStrictEquals(await tenantOfKey(keys, "k0"), DEFAULT_TENANT);
  assertStrictEquals(await tenantOfKey(keys, "secret-a"), "acme");
  assertStrictEquals(await tenantOfKey(keys, "secret-b"), "beta");
  for (const wrong of ["", "secret", "secret-a ", "SECRET-A", "acme:secret-a"]) {
    assertStrictEquals(await tenantOfKey(keys, wrong), null, JSON.stringify(wrong));
  }
  assertStrictEquals(await tenantOfKey([], "k0"), null);
});

Deno.test("tenantPrefix() keeps api: for the default tenant and gives a named one api.<name>:", () => {
  assertStrictEquals(tenantPrefix(DEFAULT_TENANT), "api:");
  assertStrictEquals(tenantPrefix("acme"), "api.acme:");
});

Deno.test("tenantSessionKey() prefixes the session id with its tenant's prefix", () => {
  assertStrictEquals(tenantSessionKey(DEFAULT_TENANT, "s1"), "api:s1");
  assertStrictEquals(tenantSessionKey("acme", "s1"), "api.acme:s1");
  // Session ids may hold colons and dots; the key still starts with its own tenant's prefix.
  assertStrictEquals(tenantSessionKey("acme", "api.beta:x"), "api.acme:api.beta:x");
});

Deno.test("mayAddressSession() allows a tenant its own API sessions only; an admin tenant any", () => {
  const acme = { name: "acme", admin: false };
  const fallback = { name: DEFAULT_TENANT, admin: false };
  assertStrictEquals(mayAddressSession(acme, "api.acme:s1"), true);
  assertStrictEquals(mayAddressSession(acme, "api.acme:api.beta:x"), true);
  for (const other of ["api:s1", "api.beta:s1", "api.acm:s1", "api.acmex:s1", "telegram:1"]) {
    assertStrictEquals(mayAddressSession(acme, other), false, other);
  }
  assertStrictEquals(mayAddressSession(fallback, "api:s1"), true);
  for (const other of ["api.acme:s1", "telegram:1", "conv:abc", "idem:abc"]) {
    assertStrictEquals(mayAddressSession(fallback, other), false, other);
  }
  for (const any of ["api:s1", "api.beta:s1", "telegram:1", "slack:T1/C2"]) {
    assertStrictEquals(mayAddressSession({ name: "acme", admin: true }, any), true, any);
  }
});

Deno.test("tenantOfSessionKey() names the API tenant of a session key, null for a platform's", () => {
  assertEquals(tenantOfSessionKey("api:abc"), "default");
  assertEquals(tenantOfSessionKey("api.acme:abc:def"), "acme");
  assertEquals(tenantOfSessionKey("telegram:42"), null);
  assertEquals(tenantOfSessionKey("webhook:api:x"), null);
  assertEquals(tenantOfSessionKey("api.:x"), null);
});
