// GitHub adapter: X-Hub-Signature-256 webhooks in (issue comments mentioning the bot), issue comments out; runtime-neutral (fetch, Web Crypto).
import * as z from "zod";
import {
  parseJsonBody,
  type PartSend,
  PayloadError,
  type PlatformAdapter,
  type PlatformEnv,
  type RawRequest,
  type SendResult,
} from "../chat/mod.ts";
import {
  type Answer,
  apiRoot,
  detail,
  formField,
  ignore,
  isFormBody,
  jsonField,
  readJson,
  respond,
  retryAfterHeader,
  sendRequest,
  type WaitSource,
} from "./_kit.ts";
import { decodeHex, encodeHex, hmacSign, hmacVerify } from "../runtime/mod.ts";
import { platformEvent } from "./_platform_event.ts";
import { keyMemoryFor, olderThanHorizon } from "./_replay_horizon.ts";

const _SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const _DEFAULT_API_ROOT = "https://api.github.com";
/** GitHub's advice when a rate limit names no wait: at least one minute. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
const _REPO = /^[^/\s]+\/[^/\s]+$/;
/** The longest comment body GitHub accepts. */
const _MAX_BODY_CHARS = 65536;
/** Room for `\n\n<!-- baton:part=<marker> -->` (about 45 characters for the outbox's markers). */
const _MARKER_ROOM = 64;
/**
 * How old a comment (its signed `created_at`) may be and still start anything; older is refused
 * as a replay, acknowledged and logged. GitHub signs no delivery time and never retries by itself,
 * but a delivery can be redelivered (same body) "from the past 3 days" on github.com and the past
 * 7 days on GitHub Enterprise Server (Webhooks, Redelivering webhooks,
 * https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks):
 * the longer, as `GITHUB_API_ROOT` may name a GHES. Its comment id is remembered as long.
 */
const _EVENT_HORIZON_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a message's delivery key is remembered: as long as the horizon lets it in. */
const _KEY_MEMORY_MS = keyMemoryFor(_EVENT_HORIZON_MS);

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _ping = z.lazy(() => z.looseObject({ zen: z.string().optional() }));

const _issueComment = z.lazy(() =>
  z.looseObject({
    action: z.string(),
    comment: z.looseObject({
      id: z.number().int(),
      body: z.string(),
      user: z.looseObject({ login: z.string().min(1), id: z.number().int(), type: z.string() }),
      author_association: z.string().optional(),
      /** ISO 8601; GitHub always sends it, and it is signed with the body. */
      created_at: z.string().optional(),
    }),
    issue: z.looseObject({ number: z.number().int().positive() }),
    repository: z.looseObject({ full_name: z.string().regex(_REPO) }),
  })
);

/** Where a GitHub reply goes: a comment on this issue or pull request. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("github"),
    repo: z.string().regex(_REPO),
    issue: z.number().int().positive(),
  })
);

/** A GitHub reply target, as stored with the message. */
export type GithubTarget = z.infer<typeof _target>;

function _escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The body without what GitHub does not treat as mentions: fenced code, quoted lines, code spans. Linear time. */
function _mentionableText(body: string): string {
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of body.split("\n")) {
    if (fence !== null) {
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*\r?$/.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      continue;
    }
    const open = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})/.exec(line);
    if (open) fence = open[1];
    else if (!/^ {0,3}>/.test(line)) kept.push(line);
  }
  const text = kept.join("\n");
  // A code span runs from a backtick run to the next run of the same length.
  const runs = [...text.matchAll(/`+/g)].map((m) => ({ at: m.index, length: m[0].length }));
  const nextSame = new Array<number>(runs.length);
  const seen = new Map<number, number>();
  for (let i = runs.length - 1; i >= 0; i--) {
    nextSame[i] = seen.get(runs[i].length) ?? -1;
    seen.set(runs[i].length, i);
  }
  let out = "";
  let from = 0;
  for (let i = 0; i < runs.length; i++) {
    const j = nextSame[i];
    if (j < 0) continue;
    out += text.slice(from, runs[i].at) + " ";
    from = runs[j].at + runs[j].length;
    i = j;
  }
  return out + text.slice(from);
}

/** Whether `body` @-mentions `login` (case-insensitive, whole login: "@batonbotx" is not "@batonbot"). */
function _mentions(body: string, login: string): boolean {
  const pattern = new RegExp(
    `(?<![A-Za-z0-9_])@${_escapeRegExp(login)}(?![A-Za-z0-9_-]|/[A-Za-z0-9])`,
    "i",
  );
  return pattern.test(_mentionableText(body));
}

/**
 * The approval command a comment is, when its whole body is `/approve`, `/approve session`,
 * `/approve always` or `/deny` (any case, optionally after `@login`), else null. Only these go to
 * the session without a mention, and without the mention, so the session reads them as commands.
 */
function _approvalAnswer(body: string, login: string): string | null {
  const mention = `(?:@${_escapeRegExp(login)}[\\s,:]+)?`;
  const command = "(/(?:approve(?:[ \\t]+(?:session|always))?|deny))";
  const match = new RegExp(`^\\s*${mention}${command}\\s*$`, "i").exec(body);
  return match ? match[1].toLowerCase().replace(/[ \t]+/, " ") : null;
}

/** The JSON payload, also from a hook configured with content type application/x-www-form-urlencoded. */
function _payload(request: RawRequest): unknown {
  if (!isFormBody(request.headers)) return parseJsonBody(request.body);
  const payload = formField(request.body, "payload");
  if (payload === null) throw new PayloadError("form-encoded body has no payload field");
  return parseJsonBody(new TextEncoder().encode(payload));
}

function _sameLogin(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** Until `x-ratelimit-reset` (epoch seconds), in seconds: the primary rate limit's wait. */
const _untilReset: WaitSource = ({ headers }) => {
  const reset = Number(headers.get("x-ratelimit-reset") ?? NaN);
  return Number.isFinite(reset) && reset > 0 ? Math.max(0, reset - Date.now() / 1000) : undefined;
};

/** A 429, or a 403 that is a secondary (Retry-After) or exhausted primary rate limit. */
function _isRateLimited({ status, headers }: Answer): boolean {
  if (status === 429) return true;
  return status === 403 &&
    (headers.has("retry-after") || headers.get("x-ratelimit-remaining") === "0");
}

/** The invisible tail of every comment baton posts: names its (message, part) for `findPart`. */
export function partMarkerComment(marker: string): string {
  return `<!-- baton:part=${marker} -->`;
}

function _headers(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "baton",
  };
}

async function _postComment(
  target: GithubTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  const path = target.repo.split("/").map(encodeURIComponent).join("/");
  const token = env.GITHUB_TOKEN ?? "";
  const root = apiRoot(env, "GITHUB_API_ROOT", _DEFAULT_API_ROOT);
  return await sendRequest(`${root}/repos/${path}/issues/${target.issue}/comments`, {
    method: "POST",
    headers: { ..._headers(token), "content-type": "application/json" },
    body: JSON.stringify({
      body: part.marker ? `${text}\n\n${partMarkerComment(part.marker)}` : text,
    }),
  }, {
    api: "GitHub API",
    leaving: part.leaving,
    secrets: [token],
    rateLimited: _isRateLimited,
    waitFrom: [retryAfterHeader, _untilReset],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }, kind) =>
      kind === "rate-limited"
        ? `the GitHub API rate-limited the comment (${status})`
        : `the GitHub API answered ${status}${detail(jsonField(body, "message"))}`,
  });
}

/**
 * GitHub repository (or app) webhooks in (a comment runs once: its id kept for as long as GitHub
 * redelivers, an older comment refused as a replay), issue and pull-request comments out.
 */
export const githubAdapter: PlatformAdapter<GithubTarget> = {
  name: "github",
  requiredEnv: ["GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_BOT_LOGIN"],
  // GitHub refuses a body over 65,536 characters (422). The reply channel keeps PART_ROOM free for
  // a resend note only; the part marker each comment ends with needs room of its own.
  maxMessageChars: _MAX_BODY_CHARS - _MARKER_ROOM,
  asyncDelivery: false,
  replyTarget: _target,

  async verify(request, env) {
    const secret = env.GITHUB_WEBHOOK_SECRET;
    if (!secret) return "GITHUB_WEBHOOK_SECRET is not set";
    const match = _SIGNATURE.exec(request.headers.get("x-hub-signature-256") ?? "");
    if (!match) return "missing or malformed X-Hub-Signature-256 (expected sha256=<64 hex digits>)";
    const signature = decodeHex(match[1], 32);
    const ok = signature !== null && await hmacVerify(secret, signature, request.body);
    return ok ? null : "X-Hub-Signature-256 does not match the body";
  },

  parse(request, env) {
    const payload = _payload(request);
    const event = request.headers.get("x-github-event") ?? "";
    if (event !== "ping" && event !== "issue_comment") {
      return ignore(event ? `event ${event}` : "no X-GitHub-Event");
    }
    if (event === "ping") {
      const ping = _ping.safeParse(payload);
      return respond({ ok: true, zen: (ping.success && ping.data.zen) || "" });
    }
    const parsed = _issueComment.safeParse(payload);
    if (!parsed.success) return ignore("issue_comment without the fields a turn needs");
    const { action, comment, issue, repository } = parsed.data;
    if (action !== "created") return ignore(`issue_comment ${action}`);
    const botLogin = env.GITHUB_BOT_LOGIN ?? "";
    if (comment.user.type === "Bot" || _sameLogin(comment.user.login, botLogin)) {
      return ignore("comment by a bot");
    }
    // An approval answer needs no mention: it is a reply to the bot's question comment.
    const answer = botLogin ? _approvalAnswer(comment.body, botLogin) : null;
    if (answer === null && (!botLogin || !_mentions(comment.body, botLogin))) {
      return ignore("bot not mentioned");
    }
    // A captured `/approve always` comment must not answer a question a week on.
    const eventMs = comment.created_at === undefined ? undefined : Date.parse(comment.created_at);
    const stamp = { id: `comment:${comment.id}`, eventMs };
    if (olderThanHorizon("github", stamp, request.nowSeconds, _EVENT_HORIZON_MS)) {
      return ignore("comment older than the replay horizon");
    }
    const repo = repository.full_name;
    const reply: GithubTarget = { platform: "github", repo, issue: issue.number };
    return {
      kind: "message",
      message: platformEvent("github", {
        sessionKey: `github:${repo}#${issue.number}`,
        // What GitHub signs, not X-GitHub-Delivery (a header outside the signature: one captured
        // comment resent under fresh ids would run each time): the comment and what happened to it,
        // remembered as long as the horizon above lets it in, past the inbox's day.
        deliveryKey: `github:comment:${comment.id}:${action}`,
        keyMemoryMs: _KEY_MEMORY_MS,
        text: answer ?? comment.body,
        context: {
          chat_id: repo,
          chat_name: repo,
          thread_id: String(issue.number),
          user_id: String(comment.user.id),
          user_name: comment.user.login,
          message_id: String(comment.id),
        },
        reply,
        // Never a private channel: GitHub has none, so no pairing codes there.
        sender: {
          user: comment.user.login,
          name: comment.user.login,
          direct: false,
          ...(comment.author_association ? { association: comment.author_association } : {}),
        },
      }),
    };
  },

  send: _postComment,
  findPart: _findPart,
};

const _comments = z.lazy(() => z.array(z.looseObject({ body: z.string().nullish() })));
/** Pages of 100 comments read before giving up on saying "absent". */
const _MAX_PAGES = 3;

/** Lists the issue's comments updated since `sinceMs` for one whose body carries `marker`. */
async function _findPart(
  target: GithubTarget,
  marker: string,
  sinceMs: number,
  env: PlatformEnv,
): Promise<boolean | null> {
  const path = target.repo.split("/").map(encodeURIComponent).join("/");
  const root = apiRoot(env, "GITHUB_API_ROOT", _DEFAULT_API_ROOT);
  const since = new Date(Math.max(0, sinceMs)).toISOString();
  const tail = partMarkerComment(marker);
  for (let page = 1; page <= _MAX_PAGES; page++) {
    const url = `${root}/repos/${path}/issues/${target.issue}/comments?since=${
      encodeURIComponent(since)
    }&per_page=100&page=${page}`;
    const listed = _comments.safeParse(
      await readJson(url, { headers: _headers(env.GITHUB_TOKEN ?? "") }),
    );
    if (!listed.success) return null;
    if (listed.data.some((c) => c.body?.includes(tail))) return true;
    if (listed.data.length < 100) return false;
  }
  return null;
}

/** Signs a body (text or raw bytes) the way GitHub does: `sha256=<hex HMAC-SHA256>`. For tests and tooling. */
export async function signGithubPayload(
  secret: string,
  body: string | Uint8Array,
): Promise<string> {
  return `sha256=${encodeHex(await hmacSign(secret, body))}`;
}
