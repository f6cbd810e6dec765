// Approvals from API clients and GitHub in workerd: chat completions and responses that pause (X-Baton-Run-Id, keep-alives, disconnects) and /approve reply comments; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { parseRunId } from "../lib/openai/mod.ts";
import { API_KEY, type Json, json, sessionState, settled, until } from "./_support/clients.ts";
import { GITHUB_REPO as REPO, githubDriver } from "./_support/drivers/github.ts";
import { deliver } from "./_support/drivers/mod.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const auth = { authorization: `Bearer ${API_KEY}` };
/** session_info asks; keep-alives every 100 ms so a test sees several while it waits. */
const ASKING = { APPROVAL_TOOLS: "session_info", KEEPALIVE_MS: "100" };

const GH = { ...ASKING, ...githubDriver.vars(), ADMIN_USERS: "github:boss" };

// One Worker for the file (asking, and GitHub): each test in sessions of its own.
const baton = sharedBaton({ vars: GH });

/** The `openai` client; `onHeaders` sees each response's headers as they arrive, before its body. */
function client(worker: TestWorker, session: string, onHeaders?: (h: Headers) => void): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 8_000,
    maxRetries: 0,
    defaultHeaders: { "x-session-id": session },
    fetch: async (url: RequestInfo | URL, init?: RequestInit) => {
      const res = await fetch(url, init);
      onHeaders?.(res.headers);
      return res;
    },
  });
}

const getRun = async (worker: TestWorker, id: string) =>
  json(await worker.fetch(`/v1/runs/${id}`, { headers: auth }));

async function approve(worker: TestWorker, id: string, choice = "once"): Promise<void> {
  const res = await worker.fetch(`/v1/runs/${id}/approval`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ choice }),
  });
  assertStrictEquals(res.status, 200, await res.text());
}

const untilStatus = (worker: TestWorker, id: string, status: string) =>
  until(async () => (await getRun(worker, id)).status === status, status);

/** A raw POST to an API route that starts a turn. */
function post(worker: TestWorker, path: string, session: string, body: Json, signal?: AbortSignal) {
  return worker.fetch(path, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "x-session-id": session },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads `res`'s body until `done(text so far)` (5 s at most); returns the text read. */
async function readUntil(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 5_000;
  // One read in flight at a time, kept across the polls: a chunk is never dropped.
  let reading: ReturnType<typeof reader.read> | null = null;
  while (!done(text)) {
    if (Date.now() > deadline) throw new Error(`read timed out; got ${JSON.stringify(text)}`);
    reading ??= reader.read();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 100));
    const chunk = await Promise.race([reading, late]);
    clearTimeout(timer);
    if (!chunk) continue;
    reading = null;
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

baton.test(
  "POST /v1/chat/completions that pauses sends X-Baton-Run-Id at once; approved by it, the openai client gets the reply",
  async (worker, fake) => {
    fake.script(askThenEcho);
    let runId = "";
    const openai = client(worker, "cc-a", (h) => runId = h.get("x-baton-run-id") ?? "");
    const pending = openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "who am i" }],
    });
    await until(() => runId !== "", "the run id header before the body");
    assertEquals(parseRunId(runId)?.session, "cc-a");
    assertEquals((await getRun(worker, runId)).status, "waiting_for_approval");
    await pause(350); // several keep-alive newlines go out before the body
    assertStrictEquals(toolRuns(fake), 0);
    await approve(worker, runId);
    const completion = await pending;
    assertMatch(completion.choices[0].message.content ?? "", /^done: \{"platform":"api"/);
    assertStrictEquals(toolRuns(fake), 1);
    // A turn that never pauses answers as before, with the header too; failures keep their status.
    const plain = await openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "plain hello" }],
    }).withResponse();
    assertEquals(plain.data.choices[0].message.content, "re: plain hello");
    assertEquals(parseRunId(plain.response.headers.get("x-baton-run-id") ?? "")?.session, "cc-a");
  },
);

baton.test(
  "POST /v1/chat/completions stream: true that pauses: run id header, an approval chunk, keep-alives, then the reply",
  async (worker, fake) => {
    fake.script(askThenEcho);
    // Raw SSE: what a UI reads.
    const res = await post(worker, "/v1/chat/completions", "cc-s", {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "who am i" }],
      stream: true,
    });
    const runId = res.headers.get("x-baton-run-id") ?? "";
    assertEquals(parseRunId(runId)?.session, "cc-s");
    const asked = await readUntil(res, (t) => /baton_approval.*\n\n(: keep-alive\n\n){2}/s.test(t));
    const question = asked.split("\n").find((l) => l.includes("baton_approval"))!;
    const chunk = JSON.parse(question.slice("data: ".length));
    assertEquals(chunk.choices, [{ index: 0, delta: {}, finish_reason: null }]);
    assertEquals(
      [chunk.baton_approval.type, chunk.baton_approval.run_id, chunk.baton_approval.tool],
      ["approval.request", runId, "session_info"],
    );
    await approve(worker, runId);
    const rest = await readUntil(res, (t) => t.includes("data: [DONE]"));
    assertMatch(rest, /"content":"done: \{\\"platform\\":\\"api\\"/);

    // The openai client passes the approval chunk over (an empty delta) and gets the reply.
    const openai = client(worker, "cc-s2");
    const { data: stream, response } = await openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "who am i" }],
      stream: true,
    }).withResponse();
    const header = response.headers.get("x-baton-run-id") ?? "";
    let text = "";
    for await (const part of stream) {
      const approval = (part as unknown as { baton_approval?: Json }).baton_approval;
      if (approval?.type === "approval.request") await approve(worker, approval.run_id);
      text += part.choices[0]?.delta.content ?? "";
    }
    assertMatch(text, /^done: \{"platform":"api","chat_id":"cc-s2"/);
    assertEquals((await getRun(worker, header)).status, "completed");
    assertStrictEquals(toolRuns(fake), 2);
  },
);

baton.test(
  "POST /v1/chat/completions: a client that disconnects while waiting leaves the turn to finish after the approval, and the session free",
  async (worker, fake) => {
    fake.script(askThenEcho);
    for (const stream of [false, true]) {
      const session = stream ? "gone-s" : "gone-p";
      const abort = new AbortController();
      const res = await post(worker, "/v1/chat/completions", session, {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "who am i" }],
        stream,
      }, abort.signal);
      const runId = res.headers.get("x-baton-run-id") ?? "";
      await untilStatus(worker, runId, "waiting_for_approval");
      abort.abort();
      await res.body?.cancel().catch(() => {});
      await pause(300); // the relay notices, and keep-alives find no one
      await approve(worker, runId);
      await untilStatus(worker, runId, "completed");
      assertMatch((await getRun(worker, runId)).output, /^done: \{"platform":"api"/);
      assertEquals((await sessionState(worker, `api:${session}`)).running, false);
      const next = await post(worker, "/v1/chat/completions", session, {
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "plain next" }],
      });
      assertEquals((await json(next)).choices[0].message.content, "re: plain next");
    }
    assertStrictEquals(toolRuns(fake), 2);
  },
);

baton.test(
  "POST /v1/responses that pauses sends X-Baton-Run-Id at once, plain and streamed",
  async (worker, fake) => {
    fake.script(askThenEcho);
    const res = await post(worker, "/v1/responses", "r", { model: "gpt-4o-mini", input: "hi" });
    const runId = res.headers.get("x-baton-run-id") ?? "";
    await untilStatus(worker, runId, "waiting_for_approval");
    await approve(worker, runId);
    const body = await json(res);
    assertEquals(body.status, "completed");
    assertMatch(body.output[0].content[0].text, /^done: \{"platform":"api"/);
    assertEquals(parseRunId(runId)?.session, res.headers.get("x-session-id"));

    const streamed = await post(worker, "/v1/responses", "r", {
      model: "gpt-4o-mini",
      input: "again",
      stream: true,
    });
    const streamId = streamed.headers.get("x-baton-run-id") ?? "";
    await untilStatus(worker, streamId, "waiting_for_approval");
    await approve(worker, streamId);
    assertMatch(await streamed.text(), /event: response\.completed/);
    assertStrictEquals(toolRuns(fake), 2);
  },
);

// ---- GitHub: the question is a comment; a reply comment answers it.

const USERS = { octocat: 583231, mallory: 666, boss: 1 } as const;
let _commentId = 5000;

/**
 * githubDriver's issue_comment `created` webhook for issue 42 saying `body` (verbatim), by `login`,
 * signed by it; `ack` is the expected answer.
 */
async function commentOn(
  worker: TestWorker,
  body: string,
  login: keyof typeof USERS = "octocat",
  ack: Json = { ok: true },
): Promise<void> {
  const id = String(++_commentId);
  const from = { id: String(USERS[login]), name: login };
  const payload = JSON.stringify(githubDriver.shape({ chat: "42", text: body, id, from }));
  const headers = await githubDriver.sign(payload, githubDriver.credentials);
  await expectOk(await deliver(worker.fetch, githubDriver, { headers, body: payload, id }), ack);
}

const IGNORED = { ok: true, ignored: "bot not mentioned" };

baton.test(
  "POST /webhooks/github: a /approve reply comment by the starter approves; by someone else, or a plain comment without mention, does nothing",
  async (worker, fake, github) => {
    github.respond(() => ({ status: 201, body: { id: 1 } }));
    fake.script(askThenEcho);
    const comments = () =>
      github.calls.map((c) => String((c.body as { body: string }).body).split("\n\n<!--")[0]);
    await commentOn(worker, "@batonbot who am i");
    await until(() => comments().some((t) => t.startsWith("Approval needed: session_info")), "ask");
    const asked = comments().length;

    await commentOn(worker, "/approve", "mallory");
    await until(() => comments().some((t) => t.startsWith("Not yours")), "not yours");
    const models = fake.requests.length;
    await commentOn(worker, "looks fine to me", "octocat", IGNORED);
    await commentOn(worker, "yes", "octocat", IGNORED);
    await pause(300);
    assertStrictEquals(toolRuns(fake), 0);
    assertStrictEquals(fake.requests.length, models, "a comment without mention reached no one");
    assertStrictEquals(comments().length, asked + 1, "only the Not yours reply");
    assert((await sessionState(worker, `github:${REPO}#42`)).running);

    await commentOn(worker, "/approve");
    await until(() => comments().some((t) => t.startsWith("done: ")), "the reply");
    assertMatch(
      comments().find((t) => t.startsWith("done: "))!,
      /^done: \{"platform":"github".*"user_id":"583231"/,
    );
    assertStrictEquals(toolRuns(fake), 1);

    // An admin's answer counts too, also written after the mention.
    await commentOn(worker, "@batonbot again");
    await until(() => comments().filter((t) => t.startsWith("Approval needed")).length === 2, "2");
    await commentOn(worker, "@batonbot /deny", "boss");
    await until(() => comments().some((t) => /^done: .*denied this call/.test(t)), "denied");
    assertStrictEquals(toolRuns(fake), 1);
    // The turn ends just after its reply is posted: wait for that, rather than race it.
    await settled(worker, `github:${REPO}#42`);
  },
);

baton.done();
