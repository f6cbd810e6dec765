// Test clients for baton's HTTP surface: API calls and signed generic webhooks; Deno.
import { GENERIC_SECRET, genericDriver } from "./drivers/generic.ts";
import { type FakeModel, startFakeModel } from "../../lib/testing/fake_model.ts";
import { type DirectoryMode, startWorker, type TestWorker } from "./worker.ts";

/** The API key every integration test configures. */
export const API_KEY = "test-gateway-key";
/** The generic webhook secret every integration test configures. */
export const WEBHOOK_SECRET = GENERIC_SECRET;

/** A parsed JSON response body, loosely typed for assertions. */
// deno-lint-ignore no-explicit-any
export type Json = any;

/** Reads a response body as JSON. */
export function json(res: Response): Promise<Json> {
  return res.json();
}

/** POST /v1/chat/completions with one user message (or the given messages). */
export function chat(
  worker: TestWorker,
  content: string | { role: string; content: string }[],
  opts: { session?: string; stream?: boolean; user?: string; key?: string } = {},
): Promise<Response> {
  const messages = typeof content === "string" ? [{ role: "user", content }] : content;
  return worker.fetch("/v1/chat/completions", {
    method: "POST",
    headers: {
      authorization: `Bearer ${opts.key ?? API_KEY}`,
      "content-type": "application/json",
      ...(opts.session ? { "x-session-id": opts.session } : {}),
    },
    body: JSON.stringify({ model: "any", messages, stream: opts.stream ?? false, user: opts.user }),
  });
}

/** The reply text of a non-streaming chat completion, asserting a 200. */
export async function chatReply(res: Response): Promise<string> {
  const body = await json(res);
  if (res.status !== 200) {
    throw new Error(`expected 200, got ${res.status}: ${JSON.stringify(body)}`);
  }
  return body.choices[0].message.content;
}

/**
 * POST `path` with the API key and `body` as JSON (plus `headers`), given up after `timeoutMs`: a
 * test whose bug leaves a session unanswering must fail on that, not hang.
 */
export function postJson(
  worker: TestWorker,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Response> {
  return worker.fetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

/** GET /v1/sessions/{key}. */
export async function sessionState(
  worker: TestWorker,
  key: string,
): Promise<
  { key: string; running: boolean; queued: number; messages: { role: string; content: string }[] }
> {
  const res = await worker.fetch(`/v1/sessions/${encodeURIComponent(key)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (res.status !== 200) throw new Error(`session state: ${res.status} ${await res.text()}`);
  return json(res);
}

/**
 * POST /webhooks/generic signed per Standard Webhooks by the generic driver (the standardwebhooks
 * package), with `secret`, under `id` at `timestamp`; `signature` replaces the signature and
 * `rawBody` the payload's JSON (override any part to break it).
 */
export async function sendWebhook(
  worker: TestWorker,
  payload: unknown,
  opts: { id?: string; timestamp?: number; secret?: string; signature?: string; rawBody?: string } =
    {},
): Promise<Response> {
  const body = opts.rawBody ?? JSON.stringify(payload);
  const headers = await genericDriver.sign(body, { secret: opts.secret ?? WEBHOOK_SECRET }, {
    id: opts.id,
    at: opts.timestamp,
  });
  if (opts.signature !== undefined) headers["webhook-signature"] = opts.signature;
  return worker.fetch(genericDriver.path, { method: "POST", headers, body });
}

/** Polls `check` until it returns true (`timeoutMs`, 10 s by default, at most). */
export async function until(
  check: () => boolean | Promise<boolean>,
  what = "condition",
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until session `key` has no turn running or queued (its replies all sent). */
export async function settled(worker: TestWorker, key: string): Promise<void> {
  await until(async () => {
    const state = await sessionState(worker, key);
    return !state.running && state.queued === 0;
  }, `${key} settled`);
}

/** Waits until exactly `n` messages wait in session `key` behind its running turn. */
export async function untilQueued(worker: TestWorker, key: string, n: number): Promise<void> {
  await until(async () => (await sessionState(worker, key)).queued === n, `${n} queued in ${key}`);
}

/**
 * The settings every workerd test starts from: `fake` as the model (two retries), the test API key
 * and webhook secret, and an open access policy.
 */
export function testVars(fake: FakeModel): Record<string, string> {
  return {
    LLM_BASE_URL: fake.url,
    LLM_API_KEY: "sk-test",
    LLM_MAX_RETRIES: "2",
    GATEWAY_API_KEY: API_KEY,
    WEBHOOK_SECRET,
    // Anyone may talk to the bot unless a test says otherwise: access control has its own tests.
    ACCESS_POLICY: "open",
  };
}

/** Runs `fn` against baton in workerd wired to a fresh fake model; everything is disposed after. */
export async function withBaton(
  fn: (worker: TestWorker, fake: FakeModel) => Promise<void>,
  opts: {
    vars?: Record<string, string>;
    persistDir?: string;
    directory?: DirectoryMode;
    /** Bind the `MEDIA` R2 bucket (default none). */
    media?: boolean;
  } = {},
): Promise<void> {
  const fake = await startFakeModel();
  try {
    const worker = await startWorker({
      vars: { ...testVars(fake), ...opts.vars },
      persistDir: opts.persistDir,
      directory: opts.directory,
      ...(opts.media ? { media: true } : {}),
    });
    try {
      await fn(worker, fake);
    } finally {
      fake.release();
      await worker.dispose();
    }
  } finally {
    await fake.close();
  }
}
