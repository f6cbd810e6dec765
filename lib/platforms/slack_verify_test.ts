// Unit tests for lib/platforms/slack.ts: v0 signature verification and the ssl_check probe; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import type { RawRequest } from "../chat/mod.ts";
import { signSlackRequest, slackAdapter } from "./slack.ts";
import { callback, ENV, mention, NOW, SECRET, signed } from "./_slack_fixtures.ts";

Deno.test("slackAdapter.verify() accepts a correct v0 signature over the raw body", async () => {
  assertStrictEquals(await slackAdapter.verify(await signed(callback(mention())), ENV), null);
});

Deno.test("slackAdapter.verify() accepts timestamps just inside ±5 minutes", async () => {
  for (const timestamp of [NOW - 300, NOW + 300]) {
    assertStrictEquals(await slackAdapter.verify(await signed("{}", { timestamp }), ENV), null);
  }
});

Deno.test("slackAdapter.verify() refuses a signature made with another secret", async () => {
  const refusal = await slackAdapter.verify(await signed("{}", { secret: "other" }), ENV);
  assertEquals(refusal, "X-Slack-Signature does not match the request");
});

Deno.test("slackAdapter.verify() refuses a body changed after signing", async () => {
  const request = await signed('{"type":"event_callback"}');
  request.body = new TextEncoder().encode('{"type":"event_callback" }');
  assertEquals(
    await slackAdapter.verify(request, ENV),
    "X-Slack-Signature does not match the request",
  );
});

Deno.test("slackAdapter.verify() refuses stale and future timestamps", async () => {
  for (const timestamp of [NOW - 301, NOW + 301, NOW - 86_400]) {
    const refusal = await slackAdapter.verify(await signed("{}", { timestamp }), ENV);
    assertEquals(refusal, "X-Slack-Request-Timestamp is outside ±300s of now");
  }
});

Deno.test("slackAdapter.verify() refuses a malformed signature or timestamp", async () => {
  const good = await signSlackRequest({ secret: SECRET, timestamp: NOW, body: "{}" });
  for (
    const signature of [
      good.slice(3),
      "v1=" + good.slice(3),
      good.slice(0, -1),
      good.slice(0, -2) + "zz",
      "v0=",
      "v0=" + good.slice(3).toUpperCase().replace(/^./, "G"),
    ]
  ) {
    const refusal = await slackAdapter.verify(await signed("{}", { signature }), ENV);
    assertEquals(refusal, "X-Slack-Signature is not of the form v0=<hex>", signature);
  }
  const request = await signed("{}");
  request.headers.set("x-slack-request-timestamp", "17e8");
  assertEquals(
    await slackAdapter.verify(request, ENV),
    "X-Slack-Request-Timestamp is not an integer number of seconds",
  );
});

Deno.test("slackAdapter.verify() accepts upper-case hex of the right signature", async () => {
  const good = await signSlackRequest({ secret: SECRET, timestamp: NOW, body: "{}" });
  const signature = "v0=" + good.slice(3).toUpperCase();
  assertStrictEquals(await slackAdapter.verify(await signed("{}", { signature }), ENV), null);
});

Deno.test("slackAdapter.verify() refuses a request without the signature headers", async () => {
  for (const name of ["x-slack-signature", "x-slack-request-timestamp"]) {
    const request = await signed("{}");
    request.headers.delete(name);
    assertEquals(
      await slackAdapter.verify(request, ENV),
      "missing X-Slack-Signature or X-Slack-Request-Timestamp header",
    );
  }
});

Deno.test("slackAdapter.verify() never puts the signing secret in a refusal", async () => {
  const refusals = [
    await slackAdapter.verify(await signed("{}", { secret: "x" }), ENV),
    await slackAdapter.verify(await signed("{}", { timestamp: 0 }), ENV),
    await slackAdapter.verify(await signed("{}", { signature: "v0=zz" }), ENV),
  ];
  for (const refusal of refusals) {
    assert(typeof refusal === "string" && !refusal.includes(SECRET), String(refusal));
  }
});

Deno.test("slackAdapter verify() and parse() answer an ssl_check form probe with 200 {} and no turn", async () => {
  const request: RawRequest = {
    headers: new Headers({ "content-type": "application/x-www-form-urlencoded" }),
    body: new TextEncoder().encode("ssl_check=1&token=legacy"),
    url: "https://baton.test/webhooks/slack",
    nowSeconds: NOW,
  };
  assertStrictEquals(await slackAdapter.verify(request, ENV), null);
  assertEquals(slackAdapter.parse(request, ENV), { kind: "respond", status: 200, body: {} });
});

Deno.test("slackAdapter.verify() still checks the signature of a JSON body that says ssl_check", async () => {
  const request = await signed('{"ssl_check":"1"}', { secret: "wrong" });
  assert(await slackAdapter.verify(request, ENV));
});
