// POST /webhooks/github end to end: signed issue comments in, issue comments out via a fake GitHub REST API, one workerd for the file; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { json, sessionState, settled } from "./_support/clients.ts";
import { githubDriver as driver } from "./_support/drivers/github.ts";
import type { FakeModel } from "../lib/testing/fake_model.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

/** A comment's text as people see it: without the invisible part marker baton appends. */
function visible(body: string): string {
  return body.replace(/\n\n<!-- baton:part=[A-Za-z0-9_-]+ -->$/, "");
}

const VARS = driver.vars();

/** A repository of one test's own (the chat of its sessions): names no other test of the file uses. */
const repoOf = (n: number) => `octo-org/hello-world-${n}`;

let _commentIds = 1000;

/**
 * An issue_comment delivery's payload as githubDriver shapes it: a comment on issue 42 (or
 * `opts.issue`) moved to `repo`, with the action, commenter type and pull request asked for.
 */
function comment(
  body: string,
  repo: string,
  opts: { action?: string; login?: string; type?: string; issue?: number; pr?: boolean } = {},
) {
  const from = { id: "583231", name: opts.login ?? "octocat" };
  const id = String(++_commentIds);
  // deno-lint-ignore no-explicit-any
  const shaped: any = driver.shape({ chat: String(opts.issue ?? 42), text: body, id, from });
  const [owner, name] = repo.split("/");
  return {
    ...shaped,
    action: opts.action ?? "created",
    issue: {
      ...shaped.issue,
      ...(opts.pr ? { pull_request: { url: "https://api.github.com/pulls/7" } } : {}),
    },
    comment: { ...shaped.comment, user: { ...shaped.comment.user, type: opts.type ?? "User" } },
    repository: {
      ...shaped.repository,
      name,
      full_name: repo,
      owner: { ...shaped.repository.owner, login: owner },
    },
  } as { comment: { id: number } };
}

/**
 * POST /webhooks/github signed by githubDriver (with `credentials`), as GitHub's `event`;
 * `signature: null` leaves the signature header out.
 */
async function deliver(
  worker: TestWorker,
  payload: unknown,
  opts: { event?: string; credentials?: typeof driver.credentials; signature?: null } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await driver.sign(body, opts.credentials ?? driver.credentials);
  headers["x-github-event"] = opts.event ?? "issue_comment";
  if (opts.signature === null) delete headers["x-hub-signature-256"];
  return worker.fetch(driver.path, { method: "POST", headers, body });
}

// One Worker for the file: each test comments in a repository of its own (see repoOf).
const baton = sharedBaton({ vars: VARS });

/**
 * Registers a test on the file's Worker with GitHub's answer to a created comment (201) as the
 * fake's default (the fake is reset to its own default before each test).
 */
function githubTest(
  name: string,
  fn: (worker: TestWorker, fake: FakeModel, github: FakePlatform) => Promise<void>,
): void {
  baton.test(name, (worker, fake, github) => {
    github.respond(() => ({ status: 201, body: { id: 1 } }));
    return fn(worker, fake, github);
  });
}

/** Asserts no turn ran: none in `session`, none asked of the model, nothing posted to GitHub. */
async function assertNoTurn(
  worker: TestWorker,
  fake: FakeModel,
  github: FakePlatform,
  session: string,
) {
  const state = await sessionState(worker, session);
  assertEquals({ queued: state.queued, running: state.running, messages: state.messages }, {
    queued: 0,
    running: false,
    messages: [],
  });
  assertStrictEquals(fake.requests.length, 0);
  assertStrictEquals(github.calls.length, 0);
}

// Stale timestamp: does not apply; GitHub signs no delivery time. The replay defence is dedup on
// what GitHub signs: the comment's id and action (X-GitHub-Delivery is outside the signature).

githubTest(
  "POST /webhooks/github answers a signed ping with its zen and refuses an unsigned one",
  async (worker, fake, github) => {
    const repo = repoOf(1);
    const ping = { zen: "Design for failure.", hook_id: 292430182, hook: { type: "Repository" } };
    const res = await deliver(worker, ping, { event: "ping" });
    await expectOk(res, { ok: true, zen: "Design for failure." });
    const unsigned = await deliver(worker, ping, { event: "ping", signature: null });
    assertStrictEquals(unsigned.status, 401);
    await unsigned.body?.cancel();
    const wrong = await deliver(worker, ping, { event: "ping", credentials: driver.stranger });
    assertStrictEquals(wrong.status, 401);
    await wrong.body?.cancel();
    await assertNoTurn(worker, fake, github, `github:${repo}#42`);
  },
);

githubTest(
  "POST /webhooks/github retries a secondary-limit 403 but never a plain 403",
  async (worker, _fake, github) => {
    const repo = repoOf(2);
    github.respond((call) => {
      if (call.body.body.includes("secondary") && github.calls.length === 1) {
        return {
          status: 403,
          headers: {
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": String(Math.floor(Date.now() / 1000)),
          },
          body: { message: "You have exceeded a secondary rate limit" },
        };
      }
      if (call.body.body.includes("forbidden")) {
        return { status: 403, body: { message: "Resource not accessible by integration" } };
      }
      return { status: 201, body: { id: 3 } };
    });
    assertStrictEquals((await deliver(worker, comment("@batonbot secondary", repo))).status, 200);
    await github.waitForCalls(2);
    assertEquals(github.calls.map((c) => visible(c.body.body)), [
      "@batonbot secondary",
      "@batonbot secondary",
    ]);
    assertStrictEquals(
      (await deliver(worker, comment("@batonbot forbidden", repo, { issue: 43 }))).status,
      200,
    );
    await github.waitForCalls(3);
    await pause(1500);
    assertStrictEquals(github.calls.length, 3);
  },
);

githubTest(
  "POST /webhooks/github ignores the bot's own comments, other bots, edits, deletions, other events and unmentioned comments",
  async (worker, fake, github) => {
    const repo = repoOf(3);
    const cases: [string, unknown][] = [
      ["issue_comment", comment("@batonbot talking to myself", repo, { login: "BatonBot" })],
      [
        "issue_comment",
        comment("@batonbot bump deps", repo, { login: "renovate[bot]", type: "Bot" }),
      ],
      ["issue_comment", comment("@batonbot edited", repo, { action: "edited" })],
      ["issue_comment", comment("@batonbot deleted", repo, { action: "deleted" })],
      ["issue_comment", comment("no mention here", repo)],
      ["issue_comment", comment("@batonbotx is someone else", repo)],
      ["issue_comment", comment("", repo)],
      ["issue_comment", { action: "created", zen: "not a comment" }],
      ["issues", { action: "opened", issue: { number: 42, body: "@batonbot" } }],
      ["pull_request_review_comment", comment("@batonbot on a diff line", repo)],
      ["push", { ref: "refs/heads/main" }],
    ];
    for (const [event, payload] of cases) {
      const res = await deliver(worker, payload, { event });
      assertStrictEquals(res.status, 200, `${event} ${JSON.stringify(payload)}`);
      const body = await json(res);
      assertStrictEquals(body.ok, true);
      assertStrictEquals(typeof body.ignored, "string");
    }
    await pause(300);
    await assertNoTurn(worker, fake, github, `github:${repo}#42`);
  },
);

githubTest(
  "POST /webhooks/github binds the repository, issue and commenter as the turn context (session_info)",
  async (worker, fake, github) => {
    fake.script(echoSessionInfo());
    const repo = repoOf(4);
    const payload = comment("@BatonBot who am I talking to?", repo, { issue: 7, pr: true });
    assertStrictEquals((await deliver(worker, payload)).status, 200);
    await github.waitForCalls(1);
    assertStrictEquals(github.calls[0].path, `/repos/${repo}/issues/7/comments`);
    assertEquals(JSON.parse(visible(github.calls[0].body.body)), {
      platform: "github",
      chat_id: repo,
      thread_id: "7",
      user_id: "583231",
      user_name: "octocat",
      session_key: `github:${repo}#7`,
      message_id: String(payload.comment.id),
      async_delivery: false,
    });
  },
);

githubTest(
  "POST /webhooks/github runs one signed comment once, however many fresh X-GitHub-Delivery ids resend it",
  async (worker, fake, github) => {
    const repo = repoOf(5);
    const session = `github:${repo}#42`;
    const payload = comment("@batonbot run this once", repo);
    // The same signed body three times, each under a new X-GitHub-Delivery (the driver draws a
    // fresh one), as anyone who captured the comment could resend it.
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify(payload);
      const headers = await driver.sign(body, driver.credentials);
      ids.add(headers["x-github-delivery"]);
      const res = await worker.fetch(driver.path, { method: "POST", headers, body });
      assertStrictEquals(res.status, 200);
      await res.body?.cancel();
    }
    assertStrictEquals(ids.size, 3);
    await github.waitForCalls(1);
    await settled(worker, session);
    const state = await sessionState(worker, session);
    assertStrictEquals(state.messages.filter((m) => m.role === "user").length, 1);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(github.calls.length, 1);
  },
);

baton.done();
