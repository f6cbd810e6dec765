// GitHub adapter: X-Hub-Signature-256 webhooks in (issue comments mentioning the bot), issue comments out; runtime-neutral (fetch, Web Crypto).
import { z } from "zod";
import {
  type Ingress,
  parseJsonBody,
  PayloadError,
  type PlatformAdapter,
  type PlatformEnv,
  type RawRequest,
  type ReplyTarget,
  type SendResult,
} from "../platform.ts";

const _HMAC = { name: "HMAC", hash: "SHA-256" };
const _SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const _DEFAULT_API_ROOT = "https://api.github.com";
/** GitHub's advice when a rate limit names no wait: at least one minute. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;
const _encoder = new TextEncoder();

const _ping = z.looseObject({ zen: z.string().optional() });

const _issueComment = z.looseObject({
  action: z.string(),
  comment: z.looseObject({
    id: z.number().int(),
    body: z.string(),
    user: z.looseObject({ login: z.string().min(1), id: z.number().int(), type: z.string() }),
  }),
  issue: z.looseObject({ number: z.number().int().positive() }),
  repository: z.looseObject({ full_name: z.string().regex(/^[^/\s]+\/[^/\s]+$/) }),
});

/** Where a GitHub reply goes: a comment on this issue or pull request. */
interface _GithubTarget extends ReplyTarget {
  platform: "github";
  repo: string;
  issue: number;
}

function _ignore(reason: string): Ingress {
  return { kind: "respond", status: 200, body: { ok: true, ignored: reason } };
}

function _hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

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

/** The JSON payload, also from a hook configured with content type application/x-www-form-urlencoded. */
function _payload(request: RawRequest): unknown {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return parseJsonBody(request.body);
  let payload: string | null;
  try {
    const form = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(request.body);
    payload = new URLSearchParams(form).get("payload");
  } catch {
    payload = null;
  }
  if (payload === null) throw new PayloadError("form-encoded body has no payload field");
  return parseJsonBody(_encoder.encode(payload));
}

function _sameLogin(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The wait a rate-limited answer asks for: Retry-After seconds, else until x-ratelimit-reset. */
function _retryAfterMs(headers: Headers): number {
  const retryAfter = Number(headers.get("retry-after") ?? NaN);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return Math.ceil(retryAfter * 1000);
  const reset = Number(headers.get("x-ratelimit-reset") ?? NaN);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, Math.ceil(reset * 1000 - Date.now()));
  return _DEFAULT_RATE_LIMIT_WAIT_MS;
}

function _isRateLimited(res: Response): boolean {
  if (res.status === 429) return true;
  return res.status === 403 &&
    (res.headers.has("retry-after") || res.headers.get("x-ratelimit-remaining") === "0");
}

async function _apiMessage(res: Response): Promise<string> {
  let detail = "";
  try {
    const body = await res.json() as { message?: unknown };
    if (typeof body?.message === "string") detail = `: ${body.message.slice(0, 200)}`;
  } catch {
    // No JSON error body: the status says enough.
  }
  return `the GitHub API answered ${res.status}${detail}`;
}

/** GitHub repository (or app) webhooks in, issue and pull-request comments out. */
export const githubAdapter: PlatformAdapter = {
  name: "github",
  requiredEnv: ["GITHUB_WEBHOOK_SECRET", "GITHUB_TOKEN", "GITHUB_BOT_LOGIN"],
  maxMessageChars: 65536,
  asyncDelivery: false,

  async verify(request: RawRequest, env: PlatformEnv): Promise<string | null> {
    const secret = env.GITHUB_WEBHOOK_SECRET;
    if (!secret) return "GITHUB_WEBHOOK_SECRET is not set";
    const match = _SIGNATURE.exec(request.headers.get("x-hub-signature-256") ?? "");
    if (!match) return "missing or malformed X-Hub-Signature-256 (expected sha256=<64 hex digits>)";
    const key = await crypto.subtle.importKey("raw", _encoder.encode(secret), _HMAC, false, [
      "verify",
    ]);
    const body = new Uint8Array(request.body);
    const ok = await crypto.subtle.verify("HMAC", key, _hexBytes(match[1]), body);
    return ok ? null : "X-Hub-Signature-256 does not match the body";
  },

  parse(request: RawRequest, env: PlatformEnv): Ingress {
    const payload = _payload(request);
    const event = request.headers.get("x-github-event") ?? "";
    if (event !== "ping" && event !== "issue_comment") {
      return _ignore(event ? `event ${event}` : "no X-GitHub-Event");
    }
    if (event === "ping") {
      const ping = _ping.safeParse(payload);
      return {
        kind: "respond",
        status: 200,
        body: { ok: true, zen: (ping.success && ping.data.zen) || "" },
      };
    }
    const parsed = _issueComment.safeParse(payload);
    if (!parsed.success) return _ignore("issue_comment without the fields a turn needs");
    const { action, comment, issue, repository } = parsed.data;
    if (action !== "created") return _ignore(`issue_comment ${action}`);
    const botLogin = env.GITHUB_BOT_LOGIN ?? "";
    if (comment.user.type === "Bot" || _sameLogin(comment.user.login, botLogin)) {
      return _ignore("comment by a bot");
    }
    if (!botLogin || !_mentions(comment.body, botLogin)) return _ignore("bot not mentioned");
    const repo = repository.full_name;
    const delivery = request.headers.get("x-github-delivery");
    const reply: _GithubTarget = { platform: "github", repo, issue: issue.number };
    return {
      kind: "message",
      message: {
        sessionKey: `github:${repo}#${issue.number}`,
        deliveryKey: delivery ? `github:${delivery}` : `github:comment:${comment.id}`,
        text: comment.body,
        context: {
          chat_id: repo,
          chat_name: repo,
          thread_id: String(issue.number),
          user_id: String(comment.user.id),
          user_name: comment.user.login,
          message_id: String(comment.id),
        },
        reply,
      },
    };
  },

  async send(target: ReplyTarget, text: string, _part, env: PlatformEnv): Promise<SendResult> {
    const { repo, issue } = target as _GithubTarget;
    const root = (env.GITHUB_API_ROOT || _DEFAULT_API_ROOT).replace(/\/+$/, "");
    const path = repo.split("/").map(encodeURIComponent).join("/");
    let res: Response;
    try {
      res = await fetch(`${root}/repos/${path}/issues/${issue}/comments`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${env.GITHUB_TOKEN ?? ""}`,
          accept: "application/vnd.github+json",
          "x-github-api-version": "2022-11-28",
          "user-agent": "baton",
          "content-type": "application/json",
        },
        body: JSON.stringify({ body: text }),
      });
    } catch {
      // The comment may have been created: a resend could post it twice.
      return { ok: false, status: 0, retryable: false, message: "could not reach the GitHub API" };
    }
    if (res.ok) {
      await res.body?.cancel();
      return { ok: true };
    }
    if (_isRateLimited(res)) {
      const retryAfterMs = _retryAfterMs(res.headers);
      await res.body?.cancel();
      return {
        ok: false,
        status: res.status,
        retryable: true,
        retryAfterMs,
        message: `the GitHub API rate-limited the comment (${res.status})`,
      };
    }
    return { ok: false, status: res.status, retryable: false, message: await _apiMessage(res) };
  },
};

/** Signs a body (text or raw bytes) the way GitHub does: `sha256=<hex HMAC-SHA256>`. For tests and tooling. */
export async function signGithubPayload(
  secret: string,
  body: string | Uint8Array,
): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes as BufferSource));
  return "sha256=" + Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}
