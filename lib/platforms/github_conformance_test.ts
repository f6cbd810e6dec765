// Conformance: the GitHub adapter against @octokit/webhooks-methods' sign/verify, every @octokit/webhooks-examples payload, and the REST comment limits; Deno (tests only).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { readFileSync } from "node:fs";
import { sign, verify } from "@octokit/webhooks-methods";
import type {
  IssueComment,
  IssueCommentCreatedEvent,
  WebhookEventName,
} from "@octokit/webhooks-types";
import {
  type Ingress,
  PART_ROOM,
  type PlatformEnv,
  type RawRequest,
  RESEND_NOTE,
  splitMessage,
} from "../chat/mod.ts";
import { githubAdapter, type GithubTarget, signGithubPayload } from "./github.ts";
import { withFetch } from "./_fetch_stub.ts";
import { assertDeclaredKeys, type KeyTable } from "./_conformance.ts";

const SECRET = "It's a Secret to Everybody";
const BOT = "batonbot";
const API = "https://github.test/api/v3";
const ENV: PlatformEnv = {
  GITHUB_WEBHOOK_SECRET: SECRET,
  GITHUB_TOKEN: "ghp_conformance_token",
  GITHUB_BOT_LOGIN: BOT,
  GITHUB_API_ROOT: API,
};
/** GitHub refuses a comment body longer than this (422 "body is too long (maximum is 65536 characters)"). */
const MAX_BODY = 65536;

/**
 * One event's entry in @octokit/webhooks-examples' index.json (the package's own index.d.ts names
 * it `WebhookDefinition`, but Deno types the JSON entry point as JSON, so it is restated here).
 */
interface ExampleDefinition {
  name: WebhookEventName;
  examples: Record<string, unknown>[];
}

/** Every published example, from github.com and each GHES release the package ships. */
function examples(): { source: string; name: string; payload: Record<string, unknown> }[] {
  const main = new URL(import.meta.resolve("@octokit/webhooks-examples"));
  const sources = ["api.github.com", "ghes-31", "ghes-32", "ghes-33", "ghes-34", "ghes-35"];
  return sources.flatMap((source) => {
    const file = new URL(`../${source}/index.json`, main);
    const definitions: ExampleDefinition[] = JSON.parse(readFileSync(file, "utf8"));
    return definitions.flatMap((d) =>
      d.examples.map((payload) => ({ source, name: d.name, payload: { ...payload } }))
    );
  });
}

const ALL = examples();

function raw(body: string, headers: Record<string, string>): RawRequest {
  return {
    headers: new Headers(headers),
    body: new TextEncoder().encode(body),
    url: "https://baton.test/webhooks/github",
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

/** A delivery as GitHub sends it: JSON body, X-Hub-Signature-256 from @octokit/webhooks-methods. */
async function delivery(
  event: string,
  payload: unknown,
  delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
) {
  const body = JSON.stringify(payload);
  return raw(body, {
    "content-type": "application/json",
    "x-github-event": event,
    "x-github-delivery": delivery,
    "x-hub-signature-256": await sign(SECRET, body),
  });
}

function isIgnored(ingress: Ingress): boolean {
  return ingress.kind === "respond" && ingress.status === 200 &&
    typeof ingress.body === "object" && ingress.body !== null && "ok" in ingress.body;
}

/** The issue_comment created samples, typed by @octokit/webhooks-types. */
/**
 * Every published issue_comment `created` sample, its comment written now unless `asPublished`:
 * the samples are years old, past the replay horizon, and GitHub delivers a comment as it is made.
 */
function createdComments(asPublished = false): IssueCommentCreatedEvent[] {
  const now = new Date().toISOString();
  return ALL.filter((e) => e.name === "issue_comment" && e.payload.action === "created")
    .map((e) => {
      const event: IssueCommentCreatedEvent = JSON.parse(JSON.stringify(e.payload));
      if (!asPublished) event.comment = { ...event.comment, created_at: now, updated_at: now };
      return event;
    });
}

Deno.test("githubAdapter.verify() accepts @octokit/webhooks-methods' sign() for every published example", async () => {
  assert(ALL.length > 300, `only ${ALL.length} examples found`);
  for (const { source, name, payload } of ALL) {
    const request = await delivery(name, payload);
    assertStrictEquals(await githubAdapter.verify(request, ENV), null, `${source} ${name}`);
  }
});

Deno.test("signGithubPayload() is accepted by @octokit/webhooks-methods' verify() and equals its sign()", async () => {
  for (const { payload } of ALL.slice(0, 60)) {
    const body = JSON.stringify(payload);
    const ours = await signGithubPayload(SECRET, body);
    assertStrictEquals(ours, await sign(SECRET, body));
    assert(await verify(SECRET, body, ours));
  }
});

Deno.test("githubAdapter.verify() refuses what @octokit/webhooks-methods' verify() refuses", async () => {
  const body = JSON.stringify(createdComments()[0]);
  const good = await sign(SECRET, body);
  const tampered = body.replace("You are totally right", "You are totally wrong");
  const cases: { body: string; signature: string }[] = [
    { body, signature: await sign("another secret", body) },
    { body: tampered, signature: good },
    { body: body + " ", signature: good },
    { body, signature: good.slice(0, -1) + (good.endsWith("0") ? "1" : "0") },
  ];
  for (const c of cases) {
    assertStrictEquals(await verify(SECRET, c.body, c.signature), false);
    const refusal = await githubAdapter.verify(
      raw(c.body, { "x-hub-signature-256": c.signature, "x-github-event": "issue_comment" }),
      ENV,
    );
    assert(typeof refusal === "string", `accepted ${c.signature}`);
  }
});

Deno.test("githubAdapter.parse() takes every published example without throwing: ping answered, comments not mentioning the bot and all other events ignored", async () => {
  const seen = new Set<string>();
  for (const { source, name, payload } of ALL) {
    const ingress = githubAdapter.parse(await delivery(name, payload), ENV);
    const what = `${source} ${name} ${String(payload.action ?? "")}`;
    seen.add(name);
    if (name === "ping") {
      assertEquals(ingress, { kind: "respond", status: 200, body: { ok: true, zen: payload.zen } });
      continue;
    }
    // No published comment mentions @batonbot: nothing in the catalogue may start a turn.
    assert(isIgnored(ingress), `${what} was not ignored: ${JSON.stringify(ingress).slice(0, 200)}`);
  }
  for (const name of ["ping", "issue_comment", "issues", "pull_request_review_comment"]) {
    assert(seen.has(name), `no ${name} example`);
  }
});

Deno.test("githubAdapter.parse() turns each published issue_comment created sample, mentioning the bot, into a message on its issue", async () => {
  const samples = createdComments();
  assert(samples.length >= 5);
  for (const [i, sample] of samples.entries()) {
    const event: IssueCommentCreatedEvent = {
      ...sample,
      comment: { ...sample.comment, body: `@${BOT} ${sample.comment.body}` },
    };
    const ingress = githubAdapter.parse(await delivery("issue_comment", event, `d-${i}`), ENV);
    assert(ingress.kind === "message", JSON.stringify(ingress));
    const { message } = ingress;
    const repo = event.repository.full_name;
    assertStrictEquals(message.sessionKey, `github:${repo}#${event.issue.number}`);
    // The signed comment's id, not the unsigned X-GitHub-Delivery (`d-${i}`): a resend is one turn.
    assertStrictEquals(message.deliveryKey, `github:comment:${event.comment.id}:created`);
    assertStrictEquals(message.text, event.comment.body);
    assertEquals(message.reply, { platform: "github", repo, issue: event.issue.number });
    assertEquals(message.context, {
      platform: "github",
      session_key: `github:${repo}#${event.issue.number}`,
      chat_id: repo,
      chat_name: repo,
      thread_id: String(event.issue.number),
      user_id: String(event.comment.user.id),
      user_name: event.comment.user.login,
      message_id: String(event.comment.id),
    });
    assertEquals(message.sender, {
      platform: "github",
      user: event.comment.user.login,
      name: event.comment.user.login,
      direct: false,
      association: event.comment.author_association,
    });
  }
});

Deno.test("githubAdapter.parse() refuses each published issue_comment created sample as published: years past the replay horizon", async () => {
  // Their created_at, in GitHub's own format, is what ages a captured comment.
  const samples = createdComments(true);
  assert(samples.length >= 5);
  for (const sample of samples) {
    const event: IssueCommentCreatedEvent = {
      ...sample,
      comment: { ...sample.comment, body: `@${BOT} ${sample.comment.body}` },
    };
    assert(Date.now() - Date.parse(event.comment.created_at) > 7 * 24 * 60 * 60 * 1000);
    const ingress = githubAdapter.parse(await delivery("issue_comment", event), ENV);
    assert(isIgnored(ingress), JSON.stringify(ingress).slice(0, 200));
  }
});

Deno.test("githubAdapter.parse() reads a published sample's approval answer, its own author's comment, and a form-encoded hook", async () => {
  const [sample] = createdComments();
  const approve: IssueCommentCreatedEvent = {
    ...sample,
    comment: { ...sample.comment, body: "/approve session" },
  };
  const answered = githubAdapter.parse(await delivery("issue_comment", approve), ENV);
  assert(answered.kind === "message");
  assertStrictEquals(answered.message.text, "/approve session");

  // The sample's author configured as the bot: its own comment never starts a turn.
  const own: IssueCommentCreatedEvent = {
    ...sample,
    comment: { ...sample.comment, body: `@${sample.comment.user.login} hi` },
  };
  const asBot = { ...ENV, GITHUB_BOT_LOGIN: sample.comment.user.login };
  assert(isIgnored(githubAdapter.parse(await delivery("issue_comment", own), asBot)));

  // A hook set to application/x-www-form-urlencoded: GitHub signs the form body it sends.
  const mention: IssueCommentCreatedEvent = {
    ...sample,
    comment: { ...sample.comment, body: `@${BOT} please look` },
  };
  const form = new URLSearchParams({ payload: JSON.stringify(mention) }).toString();
  const request = raw(form, {
    "content-type": "application/x-www-form-urlencoded",
    "x-github-event": "issue_comment",
    "x-github-delivery": "form-1",
    "x-hub-signature-256": await sign(SECRET, form),
  });
  assertStrictEquals(await githubAdapter.verify(request, ENV), null);
  const ingress = githubAdapter.parse(request, ENV);
  assert(ingress.kind === "message");
  assertStrictEquals(ingress.message.text, `@${BOT} please look`);
});

/**
 * The body of "Create an issue comment" (`POST /repos/{owner}/{repo}/issues/{issue_number}/comments`):
 * `body` is its one (required) parameter, the same `body` an `IssueComment` of
 * @octokit/webhooks-types carries; the table fails to compile if that field were renamed there.
 */
const CREATE_COMMENT: KeyTable<Pick<IssueComment, "body">> = { body: true };

const TARGET: GithubTarget = { platform: "github", repo: "Codertocat/Hello-World", issue: 1 };

Deno.test("githubAdapter.send() posts the REST create-comment body: POST /repos/{owner}/{repo}/issues/{n}/comments with only body", async () => {
  await withFetch(() => Response.json({ id: 1 }, { status: 201 }), async (calls) => {
    const result = await githubAdapter.send(
      TARGET,
      "Thanks — looking.",
      { index: 0, count: 1, marker: "o7-lz0abc12" },
      ENV,
    );
    assertEquals(result, { ok: true });
    assertStrictEquals(calls.length, 1);
    const [call] = calls;
    assertStrictEquals(call.method, "POST");
    assertStrictEquals(call.url, `${API}/repos/Codertocat/Hello-World/issues/1/comments`);
    assertStrictEquals(call.headers.get("accept"), "application/vnd.github+json");
    assertStrictEquals(call.headers.get("x-github-api-version"), "2022-11-28");
    assert(call.headers.get("user-agent"), "GitHub refuses API requests without a User-Agent");
    assertDeclaredKeys<Pick<IssueComment, "body">>("comment", call.body, CREATE_COMMENT, ["body"]);
    assertStrictEquals(typeof call.body.body, "string");
  });
});

Deno.test("githubAdapter: every part of a long reply, even resent behind RESEND_NOTE with its marker, fits GitHub's 65,536-character body", async () => {
  // One long run without a break: the split cuts each part at the full limit.
  const reply = "0123456789abcdef".repeat(Math.ceil(3 * MAX_BODY / 16));
  // As the reply channel splits it: the adapter's limit less the room it keeps for a note.
  const parts = splitMessage(reply, githubAdapter.maxMessageChars - PART_ROOM);
  assert(parts.length >= 3);
  await withFetch(() => Response.json({ id: 1 }, { status: 201 }), async (calls) => {
    for (const [index, text] of parts.entries()) {
      // A marker as long as the outbox makes them (`o<row id>-<created_at in base 36>`), and the
      // text as the outbox resends a part in doubt.
      const marker = `o${9_999_999_999}-${(Date.now() * 10).toString(36)}`;
      await githubAdapter.send(TARGET, RESEND_NOTE + text, {
        index,
        count: parts.length,
        marker,
      }, ENV);
    }
    assertStrictEquals(calls.length, parts.length);
    for (const call of calls) {
      const length = String(call.body.body).length;
      assert(length <= MAX_BODY, `a comment body of ${length} characters: GitHub answers 422`);
    }
  });
});

Deno.test("githubAdapter.findPart() lists comments with GitHub's query and finds its marker in the REST comment shape", async () => {
  const [sample] = createdComments();
  const posted: IssueComment = { ...sample.comment, body: "reply\n\n<!-- baton:part=o7-x -->" };
  await withFetch(() => Response.json([sample.comment, posted]), async (calls) => {
    assertStrictEquals(await githubAdapter.findPart!(TARGET, "o7-x", 0, ENV), true);
    const url = new URL(calls[0].url);
    assertStrictEquals(url.pathname, "/api/v3/repos/Codertocat/Hello-World/issues/1/comments");
    assertStrictEquals(url.searchParams.get("since"), "1970-01-01T00:00:00.000Z");
    const perPage = Number(url.searchParams.get("per_page"));
    assert(perPage >= 1 && perPage <= 100, "per_page is at most 100");
  });
  await withFetch(() => Response.json([sample.comment]), async () => {
    assertStrictEquals(await githubAdapter.findPart!(TARGET, "o7-x", 0, ENV), false);
  });
});
