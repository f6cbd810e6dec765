// The chaos run's fake platform APIs (Telegram, Slack, Discord, GitHub here; the other five in new_fakes.ts): what each chat shows, and the read-backs baton may ask; Deno.
import {
  type ChaosServer,
  type FakeAnswer,
  type FakeCall,
  type FaultRates,
  startChaosServer,
} from "./fake_server.ts";
import { PLATFORM_WAYS, type PlatformWay } from "./plan.ts";
import { startNewPlatformFakes } from "./new_fakes.ts";
import type { PublishedKeys } from "./new_ways.ts";
import { RESEND_NOTE } from "../../lib/chat/mod.ts";
import { SLACK_PREVIEW_MARK } from "../../lib/platforms/slack_preview.ts";
import { DISCORD_APP_ID } from "../../test/_support/drivers/discord.ts";
import type { ShownPost } from "./observation.ts";
import type { Sabotage } from "./fake_server.ts";
import { mediaRoute } from "./media.ts";
import type { ChaosFilesOut, ChaosMedia } from "./observation.ts";
import { filesRoute, uploadText } from "./files_out.ts";

/** Bot credentials the fakes check (a wrong one is refused, as the real APIs do). */
export const CHAOS_CREDENTIALS = {
  telegramToken: "424242:chaos-bot-token",
  slackToken: "xoxb-chaos-bot-token",
  githubToken: "ghp_chaos_token",
  /** The application the Discord driver shapes every interaction for. */
  discordApp: DISCORD_APP_ID,
} as const;

/** The fake platform APIs and everything they were sent. */
export interface ChaosPlatforms {
  servers: Record<PlatformWay, ChaosServer>;
  /** Every stored post of every platform, in arrival order. */
  shown: ShownPost[];
  /** Look-ups baton made per platform (GitHub comment lists, Slack history and replies). */
  lookups: Record<PlatformWay, number>;
  /** The vars that point baton at these fakes. */
  vars: Record<string, string>;
  /** The key sets Teams' and Google Chat's fakes publish: the senders put their public keys here. */
  keys: PublishedKeys;
  close(): Promise<void>;
}

const _GITHUB_MARKER = /\n\n<!-- baton:part=([A-Za-z0-9_-]{8,64}) -->$/;

/** Starts the fakes on loopback, each with its own seeded faults. */
export async function startChaosPlatforms(
  rates: FaultRates,
  random: () => number,
  sabotage?: Sabotage,
  media?: ChaosMedia,
  filesOut?: ChaosFilesOut,
): Promise<ChaosPlatforms> {
  const shown: ShownPost[] = [];
  const lookups = {} as Record<PlatformWay, number>;
  for (const way of PLATFORM_WAYS) lookups[way] = 0;
  const store = (post: Omit<ShownPost, "at">) => {
    const strip = sabotage === "strip-note" && post.text.startsWith(RESEND_NOTE);
    shown.push({
      ...post,
      text: strip ? post.text.slice(RESEND_NOTE.length) : post.text,
      at: Date.now(),
    });
  };
  const blind = sabotage === "blind-read-backs";
  const C = CHAOS_CREDENTIALS;
  // The photos' getFile and file downloads (scripts/chaos/media.ts).
  const files = media ? mediaRoute(media, C.telegramToken) : () => undefined;
  // Files out: sendPhoto / sendDocument uploads (scripts/chaos/files_out.ts).
  const uploads = filesOut ? filesRoute(filesOut, C.telegramToken, sabotage) : () => undefined;

  // Telegram: POST /bot<token>/sendMessage; no way to read a chat back.
  let telegramIds = 0;
  const telegram = await startChaosServer({
    rates,
    random,
    // Only a message or an upload is a send (faulted, holdable): typing, drafts and click answers are not.
    isSend: (call) => /\/(sendMessage|sendPhoto|sendDocument)$/.test(call.path),
    chatOf: (call) => call.body?.chat_id === undefined ? undefined : String(call.body.chat_id),
    textOf: (call) => call.body?.text ?? uploadText(call),
    faultAnswer: (status) =>
      status === 429
        ? {
          status,
          body: {
            ok: false,
            error_code: 429,
            description: "Too Many Requests: retry after 1",
            parameters: { retry_after: 1 },
          },
        }
        : { status, body: { ok: false, error_code: status, description: "Bad Gateway" } },
    route: (call) => {
      // Clicks answered, typing and drafts: shown to nobody for good, so stored nowhere.
      if (/\/(answerCallbackQuery|sendChatAction|sendMessageDraft)$/.test(call.path)) {
        return { status: 200, body: { ok: true, result: true } };
      }
      const file = files(call) ?? uploads(call);
      if (file) return file;
      if (call.path !== `/bot${C.telegramToken}/sendMessage`) {
        return { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } };
      }
      const keyboard: { callback_data?: string }[][] = call.body?.reply_markup?.inline_keyboard ??
        [];
      const buttons = keyboard.flat().map((b) => String(b.callback_data ?? ""));
      const messageId = ++telegramIds;
      store({
        way: "telegram",
        chat: String(call.body?.chat_id),
        text: String(call.body?.text ?? ""),
        replyTo: call.body?.reply_parameters?.message_id,
        ...(buttons.length ? { buttons, messageId } : {}),
      });
      return { status: 200, body: { ok: true, result: { message_id: messageId } } };
    },
  });

  // Slack: chat.postMessage (with metadata), chat.update and chat.delete (a reply previewed as it
  // grows, then edited into its first part), conversations.replies / conversations.history.
  const slackMessages: {
    channel: string;
    ts: string;
    thread_ts?: string;
    text: string;
    metadata?: unknown;
  }[] = [];
  let lastTs = 0;
  const nextTs = () => {
    // Microseconds of the wall clock, strictly increasing: ts order is post order, as on Slack.
    lastTs = Math.max(lastTs + 1, Date.now() * 1000);
    return `${Math.floor(lastTs / 1e6)}.${String(lastTs % 1e6).padStart(6, "0")}`;
  };
  const slackAuthed = (call: FakeCall) =>
    call.headers.get("authorization") === `Bearer ${C.slackToken}`;
  const slack = await startChaosServer({
    rates,
    random,
    chatOf: (call) => {
      // A post names its chat in the body; a read-back in the query (thread: its root's ts).
      const { channel, thread_ts } = call.method === "GET"
        ? { channel: call.query.get("channel"), thread_ts: call.query.get("ts") }
        : call.body ?? {};
      return typeof channel === "string"
        ? (thread_ts ? `${channel}/${thread_ts}` : channel)
        : undefined;
    },
    isSend: (call) => /\/chat\.(postMessage|update)$/.test(call.path),
    faultAnswer: (status) =>
      status === 429
        ? { status, headers: { "retry-after": "1" }, body: { ok: false, error: "ratelimited" } }
        : { status, body: { ok: false, error: "fatal_error" } },
    route: (call) => {
      if (!slackAuthed(call)) return { status: 200, body: { ok: false, error: "not_authed" } };
      if (call.path === "/api/chat.postMessage") {
        const { channel, text, thread_ts, metadata } = call.body ?? {};
        if (typeof channel !== "string" || typeof text !== "string") {
          return { status: 200, body: { ok: false, error: "invalid_arguments" } };
        }
        const ts = nextTs();
        slackMessages.push({
          channel,
          ts,
          text,
          ...(thread_ts ? { thread_ts } : {}),
          ...(metadata ? { metadata } : {}),
        });
        // A preview is shown for good only once an edit makes it the reply.
        if (text.endsWith(SLACK_PREVIEW_MARK)) {
          return { status: 200, body: { ok: true, channel, ts, message: { ts, text } } };
        }
        const part = metadata?.event_type === "baton_part"
          ? metadata?.event_payload?.part
          : undefined;
        store({
          way: "slack",
          chat: thread_ts ? `${channel}/${thread_ts}` : channel,
          text,
          ...(typeof part === "string" ? { part } : {}),
        });
        return { status: 200, body: { ok: true, channel, ts, message: { ts, text } } };
      }
      if (call.path === "/api/chat.update" || call.path === "/api/chat.delete") {
        const { channel, ts, text, metadata } = call.body ?? {};
        const at = slackMessages.findIndex((m) => m.channel === channel && m.ts === ts);
        if (at < 0) return { status: 200, body: { ok: false, error: "message_not_found" } };
        const message = slackMessages[at];
        if (call.path === "/api/chat.delete") {
          slackMessages.splice(at, 1);
          return { status: 200, body: { ok: true, channel, ts } };
        }
        if (typeof text !== "string") {
          return { status: 200, body: { ok: false, error: "invalid_arguments" } };
        }
        message.text = text;
        if (metadata) message.metadata = metadata;
        if (!text.endsWith(SLACK_PREVIEW_MARK)) {
          const part = metadata?.event_type === "baton_part"
            ? metadata?.event_payload?.part
            : undefined;
          store({
            way: "slack",
            chat: message.thread_ts ? `${channel}/${message.thread_ts}` : channel,
            text,
            edit: true,
            message: ts,
            ...(typeof part === "string" ? { part } : {}),
          });
        }
        return { status: 200, body: { ok: true, channel, ts, text } };
      }
      if (
        call.path === "/api/conversations.replies" || call.path === "/api/conversations.history"
      ) {
        lookups.slack++;
        return _slackRead(call, blind ? [] : slackMessages);
      }
      return { status: 200, body: { ok: false, error: "unknown_method" } };
    },
  });

  // Discord: PATCH the deferred @original, POST follow-ups, both on the interaction's webhook.
  const discordHook = new RegExp(`^/webhooks/${C.discordApp}/([^/]+)(/messages/@original)?$`);
  let discordIds = 0;
  const discord = await startChaosServer({
    rates,
    random,
    chatOf: (call) => {
      const token = discordHook.exec(call.path)?.[1];
      return token === undefined ? undefined : decodeURIComponent(token);
    },
    isSend: () => true,
    faultAnswer: (status) =>
      status === 429
        ? {
          status,
          headers: { "retry-after": "1" },
          body: { message: "You are being rate limited.", retry_after: 1, global: false },
        }
        : { status, body: { message: "Internal Server Error", code: 0 } },
    route: (call) => {
      const match = discordHook.exec(call.path);
      const edit = match?.[2] !== undefined;
      if (!match || call.method !== (edit ? "PATCH" : "POST")) {
        return { status: 404, body: { message: "Unknown Webhook", code: 10015 } };
      }
      const content = String(call.body?.content ?? "");
      store({ way: "discord", chat: decodeURIComponent(match[1]), text: content, edit });
      return { status: 200, body: { id: String(++discordIds), content } };
    },
  });

  // GitHub: POST and GET /repos/{owner}/{repo}/issues/{n}/comments (since, per_page, page).
  const comments = new Map<
    string,
    { id: number; body: string; created_at: string; updated_at: string }[]
  >();
  let commentIds = 5000;
  const issuePath = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/;
  const github = await startChaosServer({
    rates,
    random,
    chatOf: (call) => issuePath.exec(call.path)?.[2],
    isSend: (call) => call.method === "POST",
    faultAnswer: (status) =>
      status === 429
        ? { status, headers: { "retry-after": "1" }, body: { message: "API rate limit exceeded" } }
        : { status, body: { message: "Server Error" } },
    route: (call) => {
      if (call.headers.get("authorization") !== `Bearer ${C.githubToken}`) {
        return { status: 401, body: { message: "Bad credentials" } };
      }
      const match = issuePath.exec(call.path);
      if (!match) return { status: 404, body: { message: "Not Found" } };
      const issue = `${match[1]}#${match[2]}`;
      const list = comments.get(issue) ?? [];
      comments.set(issue, list);
      if (call.method === "POST") {
        const body = String(call.body?.body ?? "");
        const now = new Date().toISOString();
        const comment = { id: ++commentIds, body, created_at: now, updated_at: now };
        list.push(comment);
        const part = _GITHUB_MARKER.exec(body)?.[1];
        store({ way: "github", chat: match[2], text: body, ...(part ? { part } : {}) });
        return { status: 201, body: comment };
      }
      if (call.method !== "GET") return { status: 404, body: { message: "Not Found" } };
      lookups.github++;
      return _githubList(call, blind ? [] : list);
    },
  });

  const more = await startNewPlatformFakes(rates, random, store, sabotage);
  const servers = { telegram, slack, discord, github, ...more.servers };
  return {
    servers,
    shown,
    lookups,
    keys: more.keys,
    vars: {
      ...more.vars,
      TELEGRAM_API_ROOT: telegram.url,
      TELEGRAM_BOT_TOKEN: C.telegramToken,
      SLACK_API_ROOT: `${slack.url}/api`,
      SLACK_BOT_TOKEN: C.slackToken,
      DISCORD_API_ROOT: discord.url,
      DISCORD_APPLICATION_ID: C.discordApp,
      GITHUB_API_ROOT: github.url,
      GITHUB_TOKEN: C.githubToken,
    },
    close: async () => {
      await Promise.all(Object.values(servers).map((s) => s.close()));
    },
  };
}

/** GitHub's list: comments updated at or after `since`, oldest first, paged with a Link header. */
function _githubList(
  call: FakeCall,
  list: { id: number; body: string; created_at: string; updated_at: string }[],
): FakeAnswer {
  const since = call.query.get("since");
  const sinceMs = since ? Date.parse(since) : -Infinity;
  if (Number.isNaN(sinceMs)) return { status: 422, body: { message: "Validation Failed" } };
  const perPage = Math.min(100, Math.max(1, Number(call.query.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(call.query.get("page") ?? 1) || 1);
  // GitHub's timestamps have whole seconds: a comment in the same second as `since` is included.
  const matching = list.filter((c) =>
    Date.parse(c.updated_at) >= Math.floor(sinceMs / 1000) * 1000
  );
  const slice = matching.slice((page - 1) * perPage, page * perPage);
  const headers: Record<string, string> = {};
  if (page * perPage < matching.length) {
    const next = new URL(`http://fake${call.path}?${call.query}`);
    next.searchParams.set("page", String(page + 1));
    headers.link = `<${next.pathname}${next.search}>; rel="next"`;
  }
  return { status: 200, headers, body: slice };
}

/** Slack's reads: a thread's replies (oldest first) or a channel's history (newest first), paged. */
function _slackRead(
  call: FakeCall,
  all: { channel: string; ts: string; thread_ts?: string; text: string; metadata?: unknown }[],
): FakeAnswer {
  const channel = call.query.get("channel");
  if (!channel) return { status: 200, body: { ok: false, error: "channel_not_found" } };
  // Slack's `oldest` is exclusive unless `inclusive=true`.
  const oldest = Number(call.query.get("oldest") ?? 0);
  const after = (ts: string) =>
    call.query.get("inclusive") === "true" ? Number(ts) >= oldest : Number(ts) > oldest;
  const limit = Math.min(1000, Math.max(1, Number(call.query.get("limit") ?? 100) || 100));
  const offset = Number(call.query.get("cursor") ?? 0) || 0;
  const withMeta = call.query.get("include_all_metadata") === "true";
  let messages;
  if (call.path.endsWith("/conversations.replies")) {
    const ts = call.query.get("ts");
    if (!ts) return { status: 200, body: { ok: false, error: "thread_not_found" } };
    // The parent first (the user's mention, not stored here), then replies by age.
    messages = [
      { ts, text: "(thread root)" },
      ...all.filter((m) => m.channel === channel && m.thread_ts === ts && after(m.ts)),
    ];
  } else {
    messages = all.filter((m) => m.channel === channel && !m.thread_ts && after(m.ts))
      .reverse();
  }
  const page = messages.slice(offset, offset + limit).map((m) => {
    const { metadata, ...rest } = m as typeof m & { metadata?: unknown };
    return withMeta && metadata ? { ...rest, metadata } : rest;
  });
  const more = offset + limit < messages.length;
  return {
    status: 200,
    body: {
      ok: true,
      messages: page,
      has_more: more,
      ...(more ? { response_metadata: { next_cursor: String(offset + limit) } } : {}),
    },
  };
}
