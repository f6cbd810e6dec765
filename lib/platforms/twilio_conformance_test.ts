// Conformance: the Twilio adapter against the twilio package's signature functions (getExpectedTwilioSignature, validateRequest, validateRequestWithBody) and its own REST client's Messages create; Deno (tests only).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import twilio from "twilio";
import type { MessageListInstanceCreateOptions } from "twilio/lib/rest/api/v2010/account/message.js";
import {
  PART_ROOM,
  type PlatformEnv,
  type RawRequest,
  RESEND_NOTE,
  splitMessage,
} from "../chat/mod.ts";
import { publicUrl } from "./_kit.ts";
import { signTwilioRequest, twilioAdapter, type TwilioTarget } from "./twilio.ts";
import { type FetchCall, withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const SID = "AC" + "0123456789abcdef".repeat(2);
const TOKEN = "12345678901234567890123456789012";
const ENV: PlatformEnv = {
  TWILIO_ACCOUNT_SID: SID,
  TWILIO_AUTH_TOKEN: TOKEN,
  TWILIO_API_ROOT: "https://twilio.test",
};
/** Twilio refuses a longer Body (error 21617). */
const MAX_BODY = 1600;
const OUR_NUMBER = "+15005550006";
const CUSTOMER = "+14155238886";

/** An incoming SMS as Twilio's "incoming message webhook" page lists its parameters. */
function sms(body: string, extra: Record<string, string> = {}): Record<string, string> {
  const sid = "SM" + "a".repeat(32);
  return {
    MessageSid: sid,
    SmsSid: sid,
    SmsMessageSid: sid,
    AccountSid: SID,
    MessagingServiceSid: "MG" + "b".repeat(32),
    From: CUSTOMER,
    To: OUR_NUMBER,
    Body: body,
    NumMedia: "0",
    NumSegments: "1",
    SmsStatus: "received",
    ApiVersion: "2010-04-01",
    FromCity: "SAN FRANCISCO",
    FromState: "CA",
    FromZip: "94105",
    FromCountry: "US",
    ToCity: "",
    ToState: "",
    ToZip: "",
    ToCountry: "US",
    ...extra,
  };
}

/** An MMS: the same, with `NumMedia` and a `MediaUrl{N}`/`MediaContentType{N}` pair per item. */
function mms(body: string): Record<string, string> {
  return sms(body, {
    NumMedia: "2",
    MediaUrl0: `https://api.twilio.com/2010-04-01/Accounts/${SID}/Messages/MM1/Media/ME1`,
    MediaContentType0: "image/jpeg",
    MediaUrl1: `https://api.twilio.com/2010-04-01/Accounts/${SID}/Messages/MM1/Media/ME2`,
    MediaContentType1: "audio/ogg",
  });
}

/** A WhatsApp message through Twilio: channel addresses, the profile name and the WhatsApp id. */
function whatsapp(body: string): Record<string, string> {
  return sms(body, {
    From: `whatsapp:${CUSTOMER}`,
    To: `whatsapp:${OUR_NUMBER}`,
    ProfileName: "Ana",
    WaId: CUSTOMER.slice(1),
    Forwarded: "false",
  });
}

/**
 * The request as the route hands it to the adapter: the URL Twilio called, rebuilt as
 * `functions/webhook_routes.ts` does with `publicUrl(env.PUBLIC_URL, c.req.url)`.
 */
function request(
  params: Record<string, string>,
  signature: string,
  workerUrl: string,
  publicBase?: string,
): RawRequest {
  return {
    headers: new Headers({
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": signature,
    }),
    body: new TextEncoder().encode(new URLSearchParams(params).toString()),
    url: publicUrl(publicBase, workerUrl),
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

/** Where the Worker is reached, and which URL Twilio is configured with (and signs). */
const DEPLOYMENTS: { name: string; worker: string; publicBase?: string; signed: string }[] = [
  {
    name: "without PUBLIC_URL",
    worker: "https://baton.example.workers.dev/webhooks/twilio?tenant=a%20b",
    signed: "https://baton.example.workers.dev/webhooks/twilio?tenant=a%20b",
  },
  {
    name: "with PUBLIC_URL (a custom domain and a path prefix a proxy strips)",
    worker: "https://baton.example.workers.dev/webhooks/twilio",
    publicBase: "https://bot.example.com/chat/",
    signed: "https://bot.example.com/chat/webhooks/twilio",
  },
];

Deno.test("twilioAdapter.verify() accepts getExpectedTwilioSignature() for SMS, MMS and WhatsApp, with and without PUBLIC_URL", async () => {
  for (const d of DEPLOYMENTS) {
    for (const params of [sms("hello"), mms("look"), whatsapp("hola"), sms("ünï & = + %")]) {
      const signature = twilio.getExpectedTwilioSignature(TOKEN, d.signed, params);
      assert(twilio.validateRequest(TOKEN, signature, d.signed, params));
      const refusal = await twilioAdapter.verify(
        request(params, signature, d.worker, d.publicBase),
        ENV,
      );
      assertStrictEquals(refusal, null, `${d.name}: ${refusal}`);
    }
  }
});

Deno.test("signTwilioRequest() is accepted by twilio's validateRequest() and equals getExpectedTwilioSignature()", async () => {
  for (const d of DEPLOYMENTS) {
    const params = whatsapp("ok");
    const ours = await signTwilioRequest(TOKEN, d.signed, new URLSearchParams(params));
    assertStrictEquals(ours, twilio.getExpectedTwilioSignature(TOKEN, d.signed, params));
    assert(twilio.validateRequest(TOKEN, ours, d.signed, params));
  }
});

Deno.test("twilioAdapter.verify() accepts the port variants twilio's validateRequest() accepts (Twilio drops an HTTPS SMS callback's port)", async () => {
  const params = sms("hello");
  const cases = [
    // Configured with a port, signed without it: an SMS callback over HTTPS.
    {
      publicBase: "https://bot.example.com:8443",
      signed: "https://bot.example.com/webhooks/twilio",
    },
    // Configured without a port, signed with the scheme's default one.
    { publicBase: undefined, signed: "https://baton.example.workers.dev:443/webhooks/twilio" },
  ];
  for (const c of cases) {
    const worker = "https://baton.example.workers.dev/webhooks/twilio";
    const url = publicUrl(c.publicBase, worker);
    const signature = twilio.getExpectedTwilioSignature(TOKEN, c.signed, params);
    assert(twilio.validateRequest(TOKEN, signature, url, params), "the package accepts it");
    const refusal = await twilioAdapter.verify(
      request(params, signature, worker, c.publicBase),
      ENV,
    );
    assertStrictEquals(refusal, null, `${c.signed} as ${url}: ${refusal}`);
  }
});

Deno.test("twilioAdapter.verify() refuses what twilio's validateRequest() refuses", async () => {
  const [d] = DEPLOYMENTS;
  const params = sms("hello");
  const good = twilio.getExpectedTwilioSignature(TOKEN, d.signed, params);
  const cases: { what: string; params: Record<string, string>; signature: string; url?: string }[] =
    [
      {
        what: "another token",
        params,
        signature: twilio.getExpectedTwilioSignature("0".repeat(32), d.signed, params),
      },
      { what: "a changed Body", params: { ...params, Body: "hellO" }, signature: good },
      { what: "a parameter added", params: { ...params, Extra: "1" }, signature: good },
      {
        what: "another URL",
        params,
        signature: twilio.getExpectedTwilioSignature(TOKEN, d.signed + "&x=1", params),
      },
      {
        what: "another path",
        params,
        signature: twilio.getExpectedTwilioSignature(
          TOKEN,
          d.signed.replace("/twilio", "/twilio2"),
          params,
        ),
      },
    ];
  for (const c of cases) {
    assertStrictEquals(twilio.validateRequest(TOKEN, c.signature, d.signed, c.params), false);
    const refusal = await twilioAdapter.verify(request(c.params, c.signature, d.worker), ENV);
    assert(typeof refusal === "string", `${c.what} accepted`);
  }
});

Deno.test("twilioAdapter.verify() refuses a JSON body even where validateRequestWithBody() accepts it (no Messaging webhook sends JSON)", async () => {
  const body = JSON.stringify({ MessageSid: "SM" + "a".repeat(32), Body: "hi" });
  const url = `https://baton.example.workers.dev/webhooks/twilio?bodySHA256=${
    twilio.getExpectedBodyHash(body)
  }`;
  const signature = twilio.getExpectedTwilioSignature(TOKEN, url, {});
  assert(twilio.validateRequestWithBody(TOKEN, signature, url, body));
  assertStrictEquals(twilio.validateRequestWithBody(TOKEN, signature, url, body + " "), false);
  const refusal = await twilioAdapter.verify({
    headers: new Headers({ "content-type": "application/json", "x-twilio-signature": signature }),
    body: new TextEncoder().encode(body),
    url,
    nowSeconds: 0,
  }, ENV);
  assert(typeof refusal === "string" && /x-www-form-urlencoded/.test(refusal), String(refusal));
});

Deno.test("twilioAdapter.parse() reads Twilio's documented SMS, MMS and WhatsApp parameters", () => {
  const [d] = DEPLOYMENTS;
  const read = (params: Record<string, string>) =>
    twilioAdapter.parse(request(params, "", d.worker), ENV);

  const text = read(sms("  What's up?  "));
  assert(text.kind === "message");
  assertEquals(text.message.reply, { platform: "twilio", from: OUR_NUMBER, to: CUSTOMER });
  assertStrictEquals(text.message.text, "What's up?");
  assertStrictEquals(text.message.deliveryKey, `twilio:SM${"a".repeat(32)}`);
  assertStrictEquals(text.message.sender.user, CUSTOMER);

  const captioned = read(mms("look at this"));
  assert(captioned.kind === "message");
  assertStrictEquals(captioned.message.text, "look at this");
  assertStrictEquals(captioned.message.media?.length, 2);
  // A picture without words is a turn too: its media, fetched inside it (twilio_media.ts).
  const pictures = read(mms(""));
  assert(pictures.kind === "message");
  assertStrictEquals(pictures.message.text, "");
  assertEquals(pictures.message.media?.map((m) => [m.kind, m.type]), [
    ["photo", "image/jpeg"],
    ["voice", "audio/ogg"],
  ]);

  const wa = read(whatsapp("hola"));
  assert(wa.kind === "message");
  assertEquals(wa.message.reply, {
    platform: "twilio",
    from: `whatsapp:${OUR_NUMBER}`,
    to: `whatsapp:${CUSTOMER}`,
  });
  assertStrictEquals(wa.message.sender.name, "Ana");

  // A status callback (`MessageStatus`) and another account's message start nothing.
  assertStrictEquals(read({ ...sms("x"), MessageStatus: "delivered" }).kind, "respond");
  assertStrictEquals(read(sms("x", { AccountSid: "AC" + "f".repeat(32) })).kind, "respond");
});

// ── out ─────────────────────────────────────────────────────────────────────────────────────────

/**
 * Every option of the package's `messages.create` (camelCase); the wire form is the same names in
 * PascalCase, which `pascal` derives, so a key baton sends maps back onto this table.
 */
const CREATE: KeyTable<MessageListInstanceCreateOptions> = {
  to: true,
  statusCallback: true,
  applicationSid: true,
  maxPrice: true,
  provideFeedback: true,
  attempt: true,
  validityPeriod: true,
  forceDelivery: true,
  contentRetention: true,
  addressRetention: true,
  smartEncoded: true,
  persistentAction: true,
  trafficType: true,
  shortenUrls: true,
  scheduleType: true,
  sendAt: true,
  sendAsMms: true,
  contentVariables: true,
  messageIntent: true,
  riskCheck: true,
  from: true,
  fallbackFrom: true,
  messagingServiceSid: true,
  body: true,
  mediaUrl: true,
  contentSid: true,
};

const camel = (wire: string) => wire[0].toLowerCase() + wire.slice(1);

const TARGET: TwilioTarget = { platform: "twilio", from: OUR_NUMBER, to: CUSTOMER };

/** What baton sends for one part, as a form. */
async function batonSends(target: TwilioTarget, text: string): Promise<FetchCall> {
  let sent: FetchCall | undefined;
  await withFetch(
    () => Response.json({ sid: "SM" + "c".repeat(32), status: "queued" }, { status: 201 }),
    async (calls) => {
      assertEquals(await twilioAdapter.send(target, text, { index: 0, count: 1 }, ENV), {
        ok: true,
      });
      sent = calls[0];
    },
  );
  assert(sent);
  return sent;
}

/** What the twilio package's own REST client puts on the wire for the same message. */
async function sdkSends(
  options: MessageListInstanceCreateOptions,
): Promise<{ method: string; path: string; headers: Headers; form: URLSearchParams }> {
  const controller = new AbortController();
  let seen: { method: string; path: string; headers: Headers; form: URLSearchParams } | undefined;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: controller.signal,
    onListen() {},
  }, async (req) => {
    seen = {
      method: req.method,
      path: new URL(req.url).pathname,
      headers: req.headers,
      form: new URLSearchParams(await req.text()),
    };
    return Response.json({ sid: "SM" + "c".repeat(32), status: "queued" }, { status: 201 });
  });
  try {
    const client = twilio(SID, TOKEN);
    // The client's REST domain, pointed at the loopback server instead of api.twilio.com.
    Object.assign(client.api, { baseUrl: `http://127.0.0.1:${server.addr.port}` });
    await client.messages.create(options);
  } finally {
    controller.abort();
    await server.finished;
  }
  assert(seen);
  return seen;
}

Deno.test("twilioAdapter.send() posts the same Messages form as twilio's client.messages.create()", async () => {
  for (
    const target of [TARGET, {
      ...TARGET,
      from: `whatsapp:${OUR_NUMBER}`,
      to: `whatsapp:${CUSTOMER}`,
    }]
  ) {
    const text = "Résumé: 1 + 1 = 2 & done ✓";
    const ours = await batonSends(target, text);
    const form = new URLSearchParams(String(ours.body));
    for (const key of form.keys()) assert(camel(key) in CREATE, `undeclared ${key}`);
    assertDeclaredKeys<MessageListInstanceCreateOptions>(
      "Messages create",
      Object.fromEntries([...form.keys()].map((k) => [camel(k), form.get(k)])),
      CREATE,
      ["to", "body"],
    );
    assert(form.has("From") || form.has("MessagingServiceSid"), "From or MessagingServiceSid");

    const sdk = await sdkSends({ to: target.to, from: target.from, body: text });
    assertStrictEquals(ours.method, sdk.method);
    assertStrictEquals(new URL(ours.url).pathname, sdk.path);
    assertEquals([...form].sort(), [...sdk.form].sort());
    assertStrictEquals(ours.headers.get("authorization"), sdk.headers.get("authorization"));
    assertStrictEquals(ours.headers.get("content-type"), sdk.headers.get("content-type"));
  }
});

Deno.test("twilioAdapter.send(): every part of a long reply, resent behind RESEND_NOTE, has a Body within 1,600 characters", async () => {
  const reply = "word ".repeat(Math.ceil(4 * MAX_BODY / 5));
  const parts = splitMessage(reply, twilioAdapter.maxMessageChars - PART_ROOM);
  assert(parts.length >= 4);
  for (const part of parts) {
    const call = await batonSends(TARGET, RESEND_NOTE + part);
    const body = new URLSearchParams(String(call.body)).get("Body") ?? "";
    assert(body.length > 0 && body.length <= MAX_BODY, `a Body of ${body.length}`);
  }
});
