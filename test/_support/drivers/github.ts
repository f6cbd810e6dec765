// GitHub's driver: issue_comment deliveries built on @octokit/webhooks-examples' published sample, signed by @octokit/webhooks-methods, issue comments read back; Deno (workerd tests, fuzzer, chaos run).
import { sign } from "@octokit/webhooks-methods";
import type { IssueCommentCreatedEvent } from "@octokit/webhooks-types";
import { assertEquals, assertMatch } from "@std/assert";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PlatformAnswer } from "../fake_platform.ts";
import type { Delivery, Driver, Message, Post } from "./mod.ts";
import { utf8 } from "./wire.ts";

const SECRET = "github-test-webhook-secret";
const TOKEN = "ghp_github_test_token";
/** The bot's login: a comment that @mentions it is a turn. */
export const GITHUB_BOT = "batonbot";
const BOT = GITHUB_BOT;

/** What GitHub signs a delivery with: the webhook's secret. */
export interface GithubCredentials {
  secret: string;
}

/** The first `issue_comment` `created` example github.com's package publishes. */
function _sample(): IssueCommentCreatedEvent {
  const main = new URL(import.meta.resolve("@octokit/webhooks-examples"));
  const index: { name: string; examples: { action?: string }[] }[] = JSON.parse(
    readFileSync(new URL("../api.github.com/index.json", main), "utf8"),
  );
  const examples = index.find((d) => d.name === "issue_comment")!.examples;
  return examples.find((e) => e.action === "created") as unknown as IssueCommentCreatedEvent;
}

const SAMPLE = _sample();
/** The repository of every delivery: the published sample's. */
export const GITHUB_REPO = SAMPLE.repository.full_name;
const REPO = GITHUB_REPO;
const _COMMENTS = new RegExp(`^/repos/${REPO}/issues/([0-9]+)/comments$`);

/** A comment's text as people see it: without the invisible part marker baton appends. */
function _visible(body: string): string {
  return body.replace(/\n\n<!-- baton:part=[A-Za-z0-9_-]+ -->$/, "");
}

/**
 * `sha256=` + hex HMAC-SHA256 of the body: @octokit/webhooks-methods' `sign` for text; for bytes
 * that are not UTF-8 (which it cannot take, and GitHub never sends, but a fuzzer does) the same
 * scheme computed directly, so baton's parser still meets them under a valid signature.
 */
async function _sign(secret: string, body: string | Uint8Array): Promise<string> {
  const text = utf8(body);
  if (text !== undefined && text !== "") return await sign(secret, text);
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

let _issues = 1000;
let _comments = 2_000_000_000;

/** GitHub's driver: an issue of the sample's repository per `newChat()`, commented by its user. */
export const githubDriver: Driver<GithubCredentials> = {
  name: "github",
  path: "/webhooks/github",
  vars: () => ({ GITHUB_WEBHOOK_SECRET: SECRET, GITHUB_TOKEN: TOKEN, GITHUB_BOT_LOGIN: BOT }),
  secretVars: ["GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_BOT_LOGIN"],
  newChat: () => String(++_issues),
  session: (chat) => `github:${REPO}#${chat}`,
  // Only a comment that mentions the bot is a turn, and the model reads it whole.
  turnText: (text) => `@${BOT} ${text}`,
  // The published sample's comment, on issue `chat`, by `from` (its login and id) when given,
  // written now: the sample's own time is years past baton's replay horizon.
  shape({ chat, text, id, from, mention }: Post): IssueCommentCreatedEvent {
    const user = from
      ? { ...SAMPLE.comment.user, login: from.name, id: Number(from.id) }
      : SAMPLE.comment.user;
    const now = new Date().toISOString();
    return {
      ...SAMPLE,
      issue: { ...SAMPLE.issue, number: Number(chat) },
      comment: {
        ...SAMPLE.comment,
        id: Number(id),
        user,
        body: mention ? `@${BOT} ${text}` : text,
        created_at: now,
        updated_at: now,
      },
      sender: from ? { ...SAMPLE.sender, login: from.name, id: Number(from.id) } : SAMPLE.sender,
    };
  },
  credentials: { secret: SECRET },
  stranger: { secret: "wrong-secret" },
  // A redelivery keeps its X-GitHub-Delivery: `options.id` names it.
  async sign(body, { secret }, options = {}) {
    return {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/044aadd",
      "x-github-event": "issue_comment",
      "x-github-delivery": options.id ?? crypto.randomUUID(),
      "x-github-hook-id": "292430182",
      "x-hub-signature-256": await _sign(secret, body),
    };
  },
  async message({ chat, text, id }: Message): Promise<Delivery> {
    const commentId = id ?? String(++_comments);
    const body = JSON.stringify(githubDriver.shape({ chat, text, id: commentId, mention: true }));
    return {
      headers: await githubDriver.sign(body, githubDriver.credentials),
      body,
      id: commentId,
    };
  },
  async tamper(delivery) {
    const id = delivery.headers["x-github-delivery"];
    const good = delivery.headers["x-hub-signature-256"];
    const forged = (signature: string | null) => {
      const { "x-hub-signature-256": _, ...unsigned } = delivery.headers;
      return {
        ...delivery,
        headers: signature === null ? unsigned : { ...unsigned, "x-hub-signature-256": signature },
      };
    };
    return [
      {
        ...delivery,
        headers: await githubDriver.sign(delivery.body, githubDriver.stranger, { id }),
      },
      forged(await _sign(SECRET, delivery.body + " ")),
      forged(good.slice("sha256=".length)),
      forged(good.slice(0, -4)),
      forged("sha256=not-hex"),
      forged(null),
    ];
  },
  // GitHub's redelivery is the same body under the same X-GitHub-Delivery.
  redeliver: (delivery) => Promise.resolve(delivery),
  ack: { json: { ok: true } },
  sent(call) {
    const match = _COMMENTS.exec(call.path);
    if (!match || call.method !== "POST") return undefined;
    return { chat: match[1], text: _visible(call.body.body) };
  },
  partLimit: 65_536,
  rateLimited: () => ({
    status: 429,
    headers: { "retry-after": "1" },
    body: { message: "slow down" },
  }),
  // GitHub answers a created comment 201.
  accepted: (): PlatformAnswer => ({ status: 201, body: { id: 1 } }),
  context: ({ chat }, delivery) => ({
    platform: "github",
    chat_id: REPO,
    thread_id: chat,
    user_id: String(SAMPLE.comment.user.id),
    user_name: SAMPLE.comment.user.login,
    session_key: `github:${REPO}#${chat}`,
    message_id: delivery.id,
    async_delivery: false,
  }),
  expectReply(call) {
    assertEquals(call.method, "POST");
    assertEquals(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    assertEquals(call.headers.get("accept"), "application/vnd.github+json");
    assertEquals(call.headers.get("x-github-api-version"), "2022-11-28");
    assertEquals(call.headers.get("user-agent"), "baton");
    assertEquals(Object.keys(call.body), ["body"]);
    assertMatch(call.body.body, /\n\n<!-- baton:part=o[0-9]+-[0-9a-z]+ -->$/);
  },
};
