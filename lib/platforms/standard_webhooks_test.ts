// Unit tests for lib/platforms/standard_webhooks.ts; Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  signStandardWebhook,
  verifyStandardWebhook,
  type WebhookVerification,
} from "./standard_webhooks.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = 1614265330;
const BODY = new TextEncoder().encode('{"test": 2432232314}');
const VECTOR_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

function headersFor(signature: string, id = ID, timestamp = String(TS)): Headers {
  return new Headers({
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signature,
  });
}

function verify(
  headers: Headers,
  overrides: { secret?: string; body?: Uint8Array; nowSeconds?: number } = {},
): Promise<WebhookVerification> {
  return verifyStandardWebhook({
    secret: overrides.secret ?? SECRET,
    headers,
    body: overrides.body ?? BODY,
    nowSeconds: overrides.nowSeconds ?? TS,
  });
}

function assertRefused(result: WebhookVerification, reason: string): void {
  assertStrictEquals(result.ok, false);
  if (!result.ok) assertStrictEquals(result.reason, reason);
}

Deno.test("signStandardWebhook() reproduces the public Standard Webhooks reference vector", async () => {
  const sig = await signStandardWebhook({
    secret: SECRET,
    id: ID,
    timestamp: TS,
    body: '{"test": 2432232314}',
  });
  assertStrictEquals(sig, VECTOR_SIG);
  assertStrictEquals(
    await signStandardWebhook({ secret: SECRET, id: ID, timestamp: TS, body: BODY }),
    VECTOR_SIG,
  );
});

Deno.test("signStandardWebhook() rejects an undecodable secret without echoing it", async () => {
  const secret = "whsec_not*base64!";
  const err = await assertRejects(() =>
    signStandardWebhook({ secret, id: ID, timestamp: TS, body: "" })
  );
  assert(
    err instanceof Error && !err.message.includes(secret) && !err.message.includes("not*base64"),
  );
});

Deno.test("verifyStandardWebhook() accepts a valid v1 signature", async () => {
  assertEquals(await verify(headersFor(VECTOR_SIG)), { ok: true, id: ID, timestamp: TS });
});

Deno.test("verifyStandardWebhook() accepts when any one of several listed signatures matches", async () => {
  const wrong = await signStandardWebhook({
    secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAA",
    id: ID,
    timestamp: TS,
    body: BODY,
  });
  const v2 = `v2,${VECTOR_SIG.slice(3)}`;
  const header = `${wrong} v2,abc ${v2} v1,!!!not-base64!!! garbage v1, ${VECTOR_SIG}`;
  assertEquals(await verify(headersFor(header)), { ok: true, id: ID, timestamp: TS });
});

Deno.test("verifyStandardWebhook() ignores a matching signature listed under another version", async () => {
  assertRefused(await verify(headersFor(`v2,${VECTOR_SIG.slice(3)}`)), "bad_signature");
});

Deno.test("verifyStandardWebhook() refuses a wrong signature", async () => {
  const wrong = await signStandardWebhook({
    secret: SECRET,
    id: "msg_other",
    timestamp: TS,
    body: BODY,
  });
  assertRefused(await verify(headersFor(wrong)), "bad_signature");
  assertRefused(await verify(headersFor("v1,AAAA")), "bad_signature");
  assertRefused(await verify(headersFor("v1,%%%% v1 v1,=")), "bad_signature");
});

Deno.test("verifyStandardWebhook() refuses a body changed by one byte", async () => {
  const body = BODY.slice();
  body[body.length - 2] ^= 0x01;
  assertRefused(await verify(headersFor(VECTOR_SIG), { body }), "bad_signature");
});

Deno.test("verifyStandardWebhook() signs raw body bytes, not decoded text", async () => {
  const body = new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0x7b]);
  const sig = await signStandardWebhook({ secret: SECRET, id: ID, timestamp: TS, body });
  assertEquals(await verify(headersFor(sig), { body }), { ok: true, id: ID, timestamp: TS });
  const replaced = new TextEncoder().encode(new TextDecoder().decode(body));
  assertRefused(await verify(headersFor(sig), { body: replaced }), "bad_signature");
});

Deno.test("verifyStandardWebhook() refuses stale and future timestamps outside the tolerance", async () => {
  const headers = headersFor(VECTOR_SIG);
  assertRefused(await verify(headers, { nowSeconds: TS + 301 }), "stale_timestamp");
  assertRefused(await verify(headers, { nowSeconds: TS - 301 }), "stale_timestamp");
  assertStrictEquals((await verify(headers, { nowSeconds: TS + 300 })).ok, true);
  assertStrictEquals((await verify(headers, { nowSeconds: TS - 300 })).ok, true);
  const narrow = await verifyStandardWebhook({
    secret: SECRET,
    headers,
    body: BODY,
    nowSeconds: TS + 11,
    toleranceSeconds: 10,
  });
  assertRefused(narrow, "stale_timestamp");
});

Deno.test("verifyStandardWebhook() refuses a non-numeric timestamp", async () => {
  for (
    const ts of ["abc", "1614265330.0", "-1614265330", "1e9", "0x60379c72", "99999999999999999999"]
  ) {
    assertRefused(await verify(headersFor(VECTOR_SIG, ID, ts)), "stale_timestamp");
  }
});

Deno.test("verifyStandardWebhook() refuses when any header is missing or empty", async () => {
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const missing = headersFor(VECTOR_SIG);
    missing.delete(name);
    const result = await verify(missing);
    assertRefused(result, "missing_headers");
    if (!result.ok) assert(result.message.includes(name));
    const empty = headersFor(VECTOR_SIG);
    empty.set(name, "");
    assertRefused(await verify(empty), "missing_headers");
  }
});

Deno.test("verifyStandardWebhook() accepts a secret without the whsec_ prefix", async () => {
  const result = await verify(headersFor(VECTOR_SIG), { secret: SECRET.slice("whsec_".length) });
  assertEquals(result, { ok: true, id: ID, timestamp: TS });
});

Deno.test("verifyStandardWebhook() reports an undecodable secret as bad_secret without echoing it", async () => {
  for (const secret of ["whsec_not*base64!", "sekrit value", "whsec_", "", "whsec_A"]) {
    const result = await verify(headersFor(VECTOR_SIG), { secret });
    assertRefused(result, "bad_secret");
    if (!result.ok && secret) assert(!result.message.includes(secret));
  }
});

Deno.test("verifyStandardWebhook() does not throw on non-ASCII header values", async () => {
  const headers = headersFor("v1,\u00e9\u00ff \u00e9,\u00e9", "msg_\u00e9", String(TS));
  assertRefused(await verify(headers), "bad_signature");
  assertRefused(await verify(headersFor(VECTOR_SIG, ID, "16142\u00e95330")), "stale_timestamp");
});
