// Conformance: baton's Standard Webhooks verifier and signer against the standardwebhooks package's Webhook.sign/verify; Deno (tests only).
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { signStandardWebhook, verifyStandardWebhook } from "./standard_webhooks.ts";

/** A secret as senders hand them out: `whsec_` and base64 of at least 24 bytes. */
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER_SECRET = "whsec_" + btoa("another secret of 24 bytes!!");
const ID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
const BODY = JSON.stringify({
  type: "invoice.paid",
  data: { id: "in_1", amount: 4200, note: "¡olé ✓!" },
});

const now = () => Math.floor(Date.now() / 1000);

/** What baton's route hands the verifier: a `Headers` and the body's bytes. */
function verifyWithBaton(
  headers: Record<string, string>,
  body = BODY,
  secret = SECRET,
  nowSeconds = now(),
) {
  return verifyStandardWebhook({
    secret,
    headers: new Headers(headers),
    body: new TextEncoder().encode(body),
    nowSeconds,
  });
}

/** The package's verdict: true when `verify` returns, false when it throws its verification error. */
function packageAccepts(headers: Record<string, string>, body = BODY, secret = SECRET): boolean {
  try {
    new Webhook(secret).verify(body, headers, { jsonParse: false });
    return true;
  } catch (error) {
    assert(error instanceof WebhookVerificationError, String(error));
    return false;
  }
}

function signedByPackage(timestamp: number, body = BODY, secret = SECRET) {
  return {
    "webhook-id": ID,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": new Webhook(secret).sign(ID, new Date(timestamp * 1000), body),
  };
}

Deno.test("verifyStandardWebhook() accepts what standardwebhooks' Webhook.sign() signs", async () => {
  const ts = now();
  for (const body of [BODY, "", "not json at all", '{"emoji":"😀"}']) {
    const headers = signedByPackage(ts, body);
    assert(packageAccepts(headers, body));
    const verdict = await verifyWithBaton(headers, body);
    assertEquals(verdict, { ok: true, id: ID, timestamp: ts });
  }
});

Deno.test("signStandardWebhook() is accepted by standardwebhooks' Webhook.verify() (headers as a plain object) and equals its sign()", async () => {
  const ts = now();
  const signature = await signStandardWebhook({
    secret: SECRET,
    id: ID,
    timestamp: ts,
    body: BODY,
  });
  assertStrictEquals(signature, new Webhook(SECRET).sign(ID, new Date(ts * 1000), BODY));
  const headers = {
    "webhook-id": ID,
    "webhook-timestamp": String(ts),
    "webhook-signature": signature,
  };
  assertEquals(new Webhook(SECRET).verify(BODY, headers), JSON.parse(BODY));
  // The package reads own keys only: a Headers instance looks empty to it ("Missing required headers").
  // (Reflect.apply: the package's declaration rightly refuses a Headers at compile time.)
  const webhook = new Webhook(SECRET);
  const error = assertThrows(() =>
    Reflect.apply(webhook.verify, webhook, [BODY, new Headers(headers)])
  );
  assert(error instanceof WebhookVerificationError);
  assertStrictEquals(error.message, "Missing required headers");
  // The secret without its whsec_ prefix is the same key to both.
  const bare = SECRET.slice("whsec_".length);
  assertStrictEquals(
    await signStandardWebhook({ secret: bare, id: ID, timestamp: ts, body: BODY }),
    signature,
  );
  assertEquals(new Webhook(bare).verify(BODY, headers), JSON.parse(BODY));
});

Deno.test("verifyStandardWebhook() refuses what standardwebhooks refuses: wrong secret, tampered body, stale or future timestamp", async () => {
  const ts = now();
  const good = signedByPackage(ts);
  const cases: { what: string; headers: Record<string, string>; body?: string; reason: string }[] =
    [
      {
        what: "wrong secret",
        headers: signedByPackage(ts, BODY, OTHER_SECRET),
        reason: "bad_signature",
      },
      {
        what: "tampered body",
        headers: good,
        body: BODY.replace("4200", "4201"),
        reason: "bad_signature",
      },
      { what: "one byte added", headers: good, body: BODY + " ", reason: "bad_signature" },
      {
        what: "another id",
        headers: { ...good, "webhook-id": "msg_other" },
        reason: "bad_signature",
      },
      // Signed correctly, but 10 minutes old or 10 minutes ahead (both allow ±5 minutes).
      { what: "stale", headers: signedByPackage(ts - 600), reason: "stale_timestamp" },
      { what: "future", headers: signedByPackage(ts + 600), reason: "stale_timestamp" },
      {
        what: "missing signature",
        headers: { ...good, "webhook-signature": "" },
        reason: "missing_headers",
      },
    ];
  for (const c of cases) {
    assertStrictEquals(packageAccepts(c.headers, c.body), false, `the package accepted ${c.what}`);
    const verdict = await verifyWithBaton(c.headers, c.body);
    assert(!verdict.ok, `baton accepted ${c.what}`);
    assertStrictEquals(verdict.reason, c.reason, c.what);
  }
  // Just inside the window either way: both accept.
  for (const skew of [-290, 290]) {
    const headers = signedByPackage(ts + skew);
    assert(packageAccepts(headers));
    assert((await verifyWithBaton(headers)).ok, `skew ${skew}`);
  }
});

Deno.test("verifyStandardWebhook() takes several space-separated signatures as standardwebhooks does: one valid v1 is enough", async () => {
  const ts = now();
  const good = signedByPackage(ts)["webhook-signature"];
  const wrong = signedByPackage(ts, BODY, OTHER_SECRET)["webhook-signature"];
  const cases: { signature: string; accepted: boolean }[] = [
    { signature: `${wrong} ${good}`, accepted: true },
    { signature: `${good} ${wrong}`, accepted: true },
    { signature: "v1,a v1,b", accepted: false },
    { signature: `${wrong} v1,b`, accepted: false },
    // Only v1 (HMAC) is checked; an Ed25519 `v1a` entry with the same bytes is not a v1 signature.
    { signature: good.replace("v1,", "v1a,"), accepted: false },
    { signature: `v1a,xyz ${good}`, accepted: true },
  ];
  for (const c of cases) {
    const headers = {
      "webhook-id": ID,
      "webhook-timestamp": String(ts),
      "webhook-signature": c.signature,
    };
    assertStrictEquals(packageAccepts(headers), c.accepted, `package: ${c.signature}`);
    assertStrictEquals((await verifyWithBaton(headers)).ok, c.accepted, `baton: ${c.signature}`);
  }
});
