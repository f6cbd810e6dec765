// Smoke test of the test harness (fake_llm.ts + worker.ts) with a throwaway Worker; Deno + workerd.
import { assertEquals, assertMatch, assertRejects } from "@std/assert";
import { startFakeModel } from "../../lib/testing/fake_model.ts";
import { secretValues, startWorker, tempPersistDir } from "./worker.ts";

const entry = "test/_support/harness_smoke_worker.ts";

Deno.test("workerd reaches the fake LLM on loopback through a DO", async () => {
  const fake = await startFakeModel();
  const w = await startWorker({ entry, vars: { LLM_BASE_URL: fake.url } });
  try {
    const res = await w.fetch("/llm", { method: "POST", body: "hello [tag:s1]" });
    assertEquals(res.status, 200);
    const json = await res.json() as { choices: { message: { content: string } }[] };
    assertEquals(json.choices[0].message.content, "hello [tag:s1]");
    assertEquals(fake.requests.length, 1);
    assertEquals(fake.requests[0].sessionTag, "s1");
    assertEquals(fake.maxInFlightBySession.get("s1"), 1);
  } finally {
    await w.dispose();
    await fake.close();
  }
});

Deno.test("DO SQLite storage survives a restart on the same persistDir", async () => {
  const dir = await tempPersistDir();
  try {
    const a = await startWorker({ entry, persistDir: dir.path });
    try {
      assertEquals(await (await a.fetch("/put?v=kept")).text(), "ok");
    } finally {
      await a.dispose();
    }
    const b = await startWorker({ entry, persistDir: dir.path });
    try {
      assertEquals(await (await b.fetch("/get")).text(), "kept");
    } finally {
      await b.dispose();
    }
  } finally {
    await dir.cleanup();
  }
});

Deno.test("a held LLM request is dropped quietly when workerd goes away", async () => {
  const fake = await startFakeModel();
  const w = await startWorker({ entry, vars: { LLM_BASE_URL: fake.url } });
  try {
    fake.script(() => ({ kind: "hold" }));
    const pending = w.fetch("/llm", { method: "POST", body: "x" }).catch((e) => e);
    await fake.waitForRequests(1);
    assertEquals(fake.inFlight, 1);
    await w.dispose();
    await pending;
    for (let i = 0; i < 100 && fake.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assertEquals(fake.inFlight, 0);
  } finally {
    await w.dispose();
    await fake.close();
  }
});

Deno.test("startWorker() dispose fails when the Worker's output holds a configured secret", async () => {
  const vars = { SMOKE_BOT_TOKEN: "123456:very-secret-token", LLM_BASE_URL: "http://x" };
  const clean = await startWorker({ entry, vars });
  await (await clean.fetch("/log?v=nothing-to-see")).text();
  await clean.dispose();
  const leaky = await startWorker({ entry, vars });
  await (await leaky.fetch("/log?v=token%20very-secret-token%20here")).text();
  const error = await assertRejects(() => leaky.dispose());
  assertMatch(String(error), /configured secrets: very…/);
});

Deno.test("secretValues() takes secret-named vars, a key list's keys and a bot token's secret part", () => {
  assertEquals(
    secretValues({
      GATEWAY_API_KEYS: "acme:acme-key-123,beta:beta-key-456",
      TELEGRAM_BOT_TOKEN: "123:abcdefghij",
      WEBHOOK_SECRET: "whsec_abcdefgh",
      ADMIN_API_KEYS: "default,acme-admin",
      LLM_MODEL: "gpt-4o-mini-long",
      SHORT_KEY: "abc",
    }).sort(),
    [
      "123:abcdefghij",
      "abcdefghij",
      "acme-key-123",
      "acme:acme-key-123",
      "acme:acme-key-123,beta:beta-key-456",
      "beta-key-456",
      "beta:beta-key-456",
      "whsec_abcdefgh",
    ],
  );
});

Deno.test("secretValues() takes a service-account key JSON's private key, whole and line by line, not its other fields", () => {
  const pem =
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\nAQEFAASCBKcwggSjAgEAAoIB\n-----END PRIVATE KEY-----\n";
  const json = JSON.stringify({ client_email: "bot@p.iam.gserviceaccount.com", private_key: pem });
  assertEquals(
    secretValues({ GOOGLE_CHAT_SERVICE_ACCOUNT: json }).sort(),
    [
      "AQEFAASCBKcwggSjAgEAAoIB",
      "MIIEvQIBADANBgkqhkiG9w0B",
      "MIIEvQIBADANBgkqhkiG9w0B\nAQEFAASCBKcwggSjAgEAAoIB",
      json,
    ].sort(),
  );
});
