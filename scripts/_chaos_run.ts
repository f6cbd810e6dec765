// The chaos run: baton under `wrangler dev`, faulty fakes, duplicated and bad deliveries, SIGKILLs; Deno.
import { signStandardWebhook } from "../lib/standard_webhooks.ts";
import { type FakeLlm, type FakeStep, startFakeLlm } from "../test/_support/fake_llm.ts";
import { type FakePlatform, startFakePlatform } from "../test/_support/fake_platform.ts";
import { freePort, startWranglerDev, type WranglerDev } from "./_wrangler_dev.ts";

/** Size and faults of one chaos run. */
export interface ChaosOptions {
  /** Inbound messages in all, bad ones included (the full run: 2,000). */
  messages: number;
  /** Sessions, half through the generic webhook and half through Telegram (full run: 50). */
  sessions: number;
  /** SIGKILLs of the runtime's process group, evenly spread over the sends (full run: 2). */
  kills: number;
  seed: number;
  /** Share of good messages delivered twice or more (default 0.1). */
  duplicateRate?: number;
  /** Share of deliveries that are malformed or badly signed (default 0.05). */
  badRate?: number;
  /** Share of model calls that fail: 429 with Retry-After, 500, or a stall (default 0.2). */
  modelFailRate?: number;
  /** Share of Telegram sendMessage calls answered 429 (default 0.05). */
  telegram429Rate?: number;
  /** The run gives up after this long (default 10 min). */
  deadlineMs?: number;
  /** Progress lines; default silent. */
  log?: (line: string) => void;
}

/** One row of the result table. */
export interface ChaosFigure {
  label: string;
  value: number;
  /** Must be zero for the run to pass. */
  mustBeZero: boolean;
}

/** What a chaos run measured; `ok` when every must-be-zero figure is zero. */
export interface ChaosReport {
  ok: boolean;
  figures: ChaosFigure[];
  /** Examples of what went wrong, for the log. */
  problems: string[];
  seconds: number;
}

const _API_KEY = "chaos-gateway-key";
const _WEBHOOK_SECRET = "whsec_" + btoa("baton-chaos-webhook-secret-32byt");
const _TELEGRAM_SECRET = "chaos-telegram-secret";
const _BOT_TOKEN = "424242:chaos-bot-token";

type _Kind = "webhook" | "telegram";

interface _Message {
  session: _Session;
  k: number;
  marker: string;
  text: string;
  updateId: number;
  /** Extra copies: sent at once with the first ("concurrent") or after it was answered ("later"). */
  duplicate: { mode: "concurrent" | "later"; copies: number } | null;
  /** Telegram: the 200 ack; webhook: the final answer (a reply or a turn failure). */
  accepted: boolean;
  /** The generic webhook's final answers, one per copy that got one. */
  answers: { status: number; reply?: string; error?: string }[];
}

interface _BadDelivery {
  session: _Session;
  marker: string;
  what: string;
  statuses: number[];
}

interface _Session {
  index: number;
  kind: _Kind;
  name: string;
  /** The key of GET /v1/sessions/{key}. */
  key: string;
  chatId: number;
  queue: (_Message | _BadDelivery)[];
  messages: _Message[];
}

/** A small seeded PRNG (mulberry32): the same seed plans the same run. */
function _random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const _MARKER = /\bs(\d+)m(\d+)\b/;

function _plan(options: Required<Omit<ChaosOptions, "log">>, random: () => number): _Session[] {
  const sessions: _Session[] = [];
  for (let i = 0; i < options.sessions; i++) {
    const kind: _Kind = i % 2 === 0 ? "webhook" : "telegram";
    const name = `chaos-${options.seed}-${i}`;
    const chatId = 1_000_000 + options.seed % 100_000 * 100 + i;
    sessions.push({
      index: i,
      kind,
      name,
      key: kind === "webhook" ? `webhook:${name}` : `telegram:${chatId}`,
      chatId,
      queue: [],
      messages: [],
    });
  }
  let updateId = 1;
  for (let n = 0; n < options.messages; n++) {
    const session = sessions[Math.floor(random() * sessions.length)];
    if (random() < options.badRate) {
      const marker = `bad${n}`;
      const kinds = session.kind === "webhook"
        ? [
          "bad signature",
          "stale timestamp",
          "unsigned",
          "malformed JSON",
          "wrong types",
          "truncated body",
        ]
        : ["wrong secret", "no secret", "malformed JSON", "wrong types", "truncated body"];
      session.queue.push({
        session,
        marker,
        what: kinds[Math.floor(random() * kinds.length)],
        statuses: [],
      });
      continue;
    }
    const k = session.messages.length;
    const marker = `s${session.index}m${k}`;
    const message: _Message = {
      session,
      k,
      marker,
      text: `[tag:s${session.index}] ${marker} ${Math.floor(random() * 1e9).toString(36)}`,
      updateId: updateId++,
      duplicate: random() < options.duplicateRate
        ? { mode: random() < 0.5 ? "concurrent" : "later", copies: 1 + Math.floor(random() * 2) }
        : null,
      accepted: false,
      answers: [],
    };
    session.messages.push(message);
    session.queue.push(message);
  }
  return sessions;
}

/** Runs the chaos scenario and verifies it; never throws for a failed check (see `ok`). */
export async function runChaos(input: ChaosOptions): Promise<ChaosReport> {
  const options = {
    duplicateRate: 0.1,
    badRate: 0.05,
    modelFailRate: 0.2,
    telegram429Rate: 0.05,
    deadlineMs: 10 * 60_000,
    ...input,
  };
  const log = input.log ?? (() => {});
  const started = performance.now();
  const deadline = Date.now() + options.deadlineMs;
  const random = _random(options.seed);
  const faults = _random(options.seed ^ 0x5eed);
  const sessions = _plan(options, random);
  const injected = { model429: 0, model500: 0, modelStall: 0, telegram429: 0 };

  const model = await startFakeLlm();
  model.script((req): FakeStep => {
    if (!_MARKER.test(req.lastUserText)) return { kind: "text", text: req.lastUserText };
    const r = faults();
    const share = options.modelFailRate / 3;
    if (r < share) {
      injected.model429++;
      return { kind: "status", status: 429, retryAfter: "1" };
    }
    if (r < 2 * share) {
      injected.model500++;
      return { kind: "status", status: 500 };
    }
    if (r < 3 * share) {
      injected.modelStall++;
      return { kind: "hold" };
    }
    return { kind: "text", text: req.lastUserText };
  });
  const telegram = await startFakePlatform();
  /** sendMessage calls Telegram accepted (200): what a chat would show. */
  const shown: { chatId: number; replyTo: number | undefined; text: string }[] = [];
  telegram.respond((call) => {
    if (faults() < options.telegram429Rate) {
      injected.telegram429++;
      return {
        status: 429,
        body: {
          ok: false,
          error_code: 429,
          description: "Too Many Requests: retry after 1",
          parameters: { retry_after: 1 },
        },
      };
    }
    shown.push({
      chatId: Number(call.body?.chat_id),
      replyTo: call.body?.reply_parameters?.message_id,
      text: String(call.body?.text ?? ""),
    });
    return { status: 200, body: { ok: true, result: { message_id: shown.length } } };
  });

  const base = new URL("../.tmp/", import.meta.url).pathname;
  await Deno.mkdir(base, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: base, prefix: "chaos-" });
  const devOptions = {
    port: freePort(),
    inspectorPort: freePort(),
    persistDir: `${dir}/state`,
    logFile: `${dir}/wrangler.log`,
    vars: {
      LLM_BASE_URL: model.url,
      LLM_API_KEY: "sk-chaos",
      LLM_MAX_RETRIES: "2",
      TURN_TIMEOUT_MS: "3000",
      TURN_LEASE_MS: "2000",
      MAX_QUEUED: "1000",
      BUSY_ACK: "off",
      GATEWAY_API_KEY: _API_KEY,
      WEBHOOK_SECRET: _WEBHOOK_SECRET,
      TELEGRAM_WEBHOOK_SECRET: _TELEGRAM_SECRET,
      TELEGRAM_BOT_TOKEN: _BOT_TOKEN,
      TELEGRAM_API_ROOT: telegram.url,
    },
  };
  const url = `http://127.0.0.1:${devOptions.port}`;
  let dev: WranglerDev | undefined;
  const problems: string[] = [];
  const counts = {
    sent: 0,
    duplicatesSent: 0,
    badSent: 0,
    bad5xx: 0,
    good5xx: 0,
    kills: 0,
    openAtKills: 0,
  };
  let keepDir = false;
  try {
    dev = await startWranglerDev(devOptions);
    log(`baton up at ${url} (state in ${dir})`);

    const total = sessions.reduce((n, s) => n + s.queue.length, 0);
    const killAt = Array.from(
      { length: options.kills },
      (_, i) => Math.floor((total * (i + 1)) / (options.kills + 1)),
    );
    let delivered = 0;
    let restarting: Promise<void> | null = null;
    /** Webhook messages whose sender still waits for the final answer. */
    const pendingWebhooks = new Set<_Message>();

    const maybeKill = () => {
      delivered++;
      if (killAt.length && delivered >= killAt[0] && !restarting) {
        killAt.shift();
        restarting = (async () => {
          const answered = new Set(shown.map((s) => `${s.chatId}:${s.replyTo}`));
          const open = sessions.flatMap((s) =>
            s.messages
          ).filter((m) =>
            m.session.kind === "telegram"
              ? m.accepted && !answered.has(`${m.session.chatId}:${m.k + 1}`)
              : pendingWebhooks.has(m)
          ).length;
          await dev!.kill();
          counts.kills++;
          counts.openAtKills += open;
          log(
            `killed the runtime's process group (${counts.kills}) after ${delivered} deliveries, ${open} messages waiting or in a turn`,
          );
          await _sleep(300 + Math.floor(faults() * 700));
          dev = await startWranglerDev(devOptions);
          log(`restarted on the same state`);
        })().finally(() => restarting = null);
      }
    };

    /** Sends until an answer that a platform would not retry: network errors and 5xx retry. */
    const send = async (
      build: () => Promise<Request>,
      retryable: (res: Response, body: unknown) => boolean,
    ): Promise<{ status: number; body: unknown } | null> => {
      for (let attempt = 0; Date.now() < deadline; attempt++) {
        if (restarting) await restarting;
        counts.sent++;
        let res: Response;
        let text: string;
        try {
          res = await fetch(await build());
          text = await res.text();
        } catch {
          // The connection failed or broke mid-answer (a kill): the platform sends it again.
          await _sleep(Math.min(100 * 2 ** attempt, 1_000));
          continue;
        }
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Kept as text.
        }
        if (!retryable(res, body)) return { status: res.status, body };
        await _sleep(Math.min(100 * 2 ** attempt, 1_000));
      }
      return null;
    };

    const webhookRequest = async (message: _Message) => {
      const body = JSON.stringify({
        session: message.session.name,
        text: message.text,
        user: `u${message.session.index}`,
      });
      const timestamp = Math.floor(Date.now() / 1000);
      const id = `msg_${message.session.name}_${message.k}`;
      return new Request(`${url}/webhooks/generic`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": await signStandardWebhook({
            secret: _WEBHOOK_SECRET,
            id,
            timestamp,
            body,
          }),
        },
        body,
      });
    };

    const telegramUpdate = (message: _Message) => ({
      update_id: message.updateId,
      message: {
        message_id: message.k + 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: message.session.chatId, type: "private", first_name: "Chaos" },
        from: { id: message.session.chatId, is_bot: false, first_name: "Chaos" },
        text: message.text,
      },
    });

    const telegramRequest = (message: _Message) =>
      Promise.resolve(
        new Request(`${url}/webhooks/telegram`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": _TELEGRAM_SECRET,
          },
          body: JSON.stringify(telegramUpdate(message)),
        }),
      );

    // A turn's failure answer (502/504 with the outcome) is final; other 5xx and 429 are resent.
    const isTurnFailure = (status: number, body: unknown) =>
      (status === 502 || status === 504) &&
      typeof (body as { error?: { type?: unknown } })?.error?.type === "string" &&
      "session" in (body as object);

    const deliverOnce = async (message: _Message): Promise<void> => {
      const { kind } = message.session;
      if (kind === "webhook" && !message.accepted) pendingWebhooks.add(message);
      const answer = await send(
        () => kind === "webhook" ? webhookRequest(message) : telegramRequest(message),
        (res, body) => {
          if (res.status === 429) return true;
          if (res.status < 500) return false;
          if (kind === "webhook" && isTurnFailure(res.status, body)) return false;
          if (res.status !== 503) counts.good5xx++;
          return true;
        },
      );
      if (!answer) return;
      if (kind === "telegram") {
        if (answer.status === 200) message.accepted = true;
        else problems.push(`${message.marker}: Telegram delivery answered ${answer.status}`);
        return;
      }
      pendingWebhooks.delete(message);
      const body = answer.body as { reply?: string; error?: { type?: string } };
      if (answer.status === 200 || isTurnFailure(answer.status, body)) {
        message.accepted = true;
        message.answers.push({ status: answer.status, reply: body.reply, error: body.error?.type });
      } else {
        problems.push(`${message.marker}: webhook answered ${answer.status}`);
      }
    };

    const later: Promise<void>[] = [];
    const deliver = async (message: _Message): Promise<void> => {
      const copies = message.duplicate?.mode === "concurrent" ? 1 + message.duplicate.copies : 1;
      counts.duplicatesSent += copies - 1;
      await Promise.all(Array.from({ length: copies }, () => deliverOnce(message)));
      if (message.duplicate?.mode === "later") {
        const { copies: extra } = message.duplicate;
        counts.duplicatesSent += extra;
        later.push((async () => {
          for (let i = 0; i < extra; i++) {
            await _sleep(300 + Math.floor(faults() * 3_000));
            await deliverOnce(message);
          }
        })());
      }
    };

    const deliverBad = async (bad: _BadDelivery): Promise<void> => {
      counts.badSent++;
      const answer = await send(() => _badRequest(url, bad), () => false);
      if (!answer) return;
      bad.statuses.push(answer.status);
      if (answer.status >= 500) {
        counts.bad5xx++;
        problems.push(`${bad.marker} (${bad.what}): answered ${answer.status}`);
      }
    };

    await Promise.all(sessions.map(async (session) => {
      for (const item of session.queue) {
        await _sleep(Math.floor(random() * 40));
        if ("k" in item) await deliver(item);
        else await deliverBad(item);
        maybeKill();
      }
    }));
    await Promise.all(later);
    if (restarting) await restarting;
    log(`all deliveries answered after ${Math.round((performance.now() - started) / 1000)} s`);

    // Quiet: every session idle and every accepted Telegram message answered, or the deadline.
    const expectTelegram = sessions.flatMap((s) =>
      s.kind === "telegram" ? s.messages.filter((m) => m.accepted) : []
    );
    const locked = new Set<string>();
    const quietBy = Math.min(deadline, Date.now() + 120_000);
    for (;;) {
      locked.clear();
      for (const session of sessions) {
        const state = await _sessionState(url, session.key);
        if (!state || state.running || state.queued > 0) locked.add(session.key);
      }
      const answered = new Set(shown.map((s) => `${s.chatId}:${s.replyTo}`));
      const waiting = expectTelegram.filter((m) =>
        !answered.has(`${m.session.chatId}:${m.k + 1}`)
      ).length;
      if ((locked.size === 0 && waiting === 0) || Date.now() > quietBy) break;
      await _sleep(500);
    }

    const transcripts = new Map<string, { role: string; content: string }[]>();
    for (const session of sessions) {
      transcripts.set(session.key, (await _sessionState(url, session.key))?.messages ?? []);
    }
    const report = _verify({
      sessions,
      model,
      shown,
      transcripts,
      locked,
      counts,
      injected,
      problems,
      seconds: (performance.now() - started) / 1000,
    });
    keepDir = !report.ok;
    if (keepDir) report.problems.push(`state and wrangler log kept in ${dir}`);
    return report;
  } finally {
    await dev?.kill();
    await model.close();
    await telegram.close();
    if (!keepDir) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function _sessionState(
  url: string,
  key: string,
): Promise<
  { running: boolean; queued: number; messages: { role: string; content: string }[] } | null
> {
  try {
    const res = await fetch(`${url}/v1/sessions/${encodeURIComponent(key)}`, {
      headers: { authorization: `Bearer ${_API_KEY}` },
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return null;
    }
    return await res.json();
  } catch {
    return null;
  }
}

async function _badRequest(url: string, bad: _BadDelivery): Promise<Request> {
  const { session, marker, what } = bad;
  if (session.kind === "webhook") {
    const id = `msg_${marker}`;
    let timestamp = Math.floor(Date.now() / 1000);
    let body = JSON.stringify({ session: session.name, text: `[tag:s${session.index}] ${marker}` });
    if (what === "malformed JSON") body = `{"session": "${session.name}", "text": "${marker}`;
    if (what === "wrong types") body = JSON.stringify({ session: [session.name], text: 7, marker });
    if (what === "stale timestamp") timestamp -= 600;
    let signature = await signStandardWebhook({ secret: _WEBHOOK_SECRET, id, timestamp, body });
    if (what === "bad signature") {
      signature = await signStandardWebhook({
        secret: "whsec_" + btoa("not-the-secret-of-this-gateway!!"),
        id,
        timestamp,
        body,
      });
    }
    if (what === "truncated body") body = body.slice(0, Math.floor(body.length / 2));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
    };
    if (what !== "unsigned") headers["webhook-signature"] = signature;
    return new Request(`${url}/webhooks/generic`, { method: "POST", headers, body });
  }
  const update = {
    update_id: 900_000_000 + Number(marker.slice(3)),
    message: {
      message_id: 900_000,
      date: Math.floor(Date.now() / 1000),
      chat: { id: session.chatId, type: "private" },
      from: { id: session.chatId, is_bot: false, first_name: "Chaos" },
      text: `[tag:s${session.index}] ${marker}`,
    },
  };
  let body = JSON.stringify(update);
  if (what === "malformed JSON") body = body.replace(/}$/, "");
  if (what === "wrong types") {
    body = JSON.stringify({ ...update, message: { ...update.message, chat: marker, text: 5 } });
  }
  if (what === "truncated body") body = body.slice(0, Math.floor(body.length / 2));
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (what !== "no secret") {
    headers["x-telegram-bot-api-secret-token"] = what === "wrong secret"
      ? "not-the-secret"
      : _TELEGRAM_SECRET;
  }
  return new Request(`${url}/webhooks/telegram`, { method: "POST", headers, body });
}

function _verify(run: {
  sessions: _Session[];
  model: FakeLlm;
  shown: { chatId: number; replyTo: number | undefined; text: string }[];
  transcripts: Map<string, { role: string; content: string }[]>;
  locked: Set<string>;
  counts: {
    sent: number;
    duplicatesSent: number;
    badSent: number;
    bad5xx: number;
    good5xx: number;
    kills: number;
    openAtKills: number;
  };
  injected: { model429: number; model500: number; modelStall: number; telegram429: number };
  problems: string[];
  seconds: number;
}): ChaosReport {
  const { sessions, model, shown, transcripts, problems } = run;
  const good = sessions.flatMap((s) => s.messages);
  const byMarker = new Map(good.map((m) => [m.marker, m]));
  const accepted = good.filter((m) => m.accepted);

  // Turns: the model's calls per session, in arrival order; retries and reruns of one message
  // are consecutive, so after collapsing them any step backwards is a turn out of order.
  const turnsRun = new Set<string>();
  let outOfOrder = 0;
  let badTurns = 0;
  let mixedCalls = 0;
  const lastBySession = new Map<number, number>();
  for (const request of model.requests) {
    if (/\bbad\d+\b/.test(request.lastUserText)) badTurns++;
    const match = _MARKER.exec(request.lastUserText);
    if (!match) continue;
    const [marker, s, k] = [match[0], Number(match[1]), Number(match[2])];
    turnsRun.add(marker);
    const tags = new Set(
      JSON.stringify(request.body?.messages ?? []).match(/\[tag:s\d+\]/g) ?? [],
    );
    if (tags.size !== 1 || !tags.has(`[tag:s${s}]`)) {
      mixedCalls++;
      if (mixedCalls <= 3) problems.push(`model call for ${marker} carried tags ${[...tags]}`);
    }
    const last = lastBySession.get(s) ?? -1;
    if (k < last) {
      outOfOrder++;
      if (outOfOrder <= 5) problems.push(`${marker} ran after s${s}m${last}`);
    }
    lastBySession.set(s, Math.max(last, k));
  }

  // Replies: Telegram sends per (chat, message answered); webhook answers per message.
  const replies = new Map<string, string[]>();
  let misrouted = 0;
  for (const send of shown) {
    const session = sessions.find((s) => s.kind === "telegram" && s.chatId === send.chatId);
    const message = session?.messages[(send.replyTo ?? 0) - 1];
    if (!message) {
      misrouted++;
      problems.push(`a Telegram send answered no known message: ${send.text.slice(0, 80)}`);
      continue;
    }
    const list = replies.get(message.marker) ?? [];
    list.push(send.text);
    replies.set(message.marker, list);
  }
  for (const message of good) {
    if (message.session.kind !== "webhook" || !message.answers.length) continue;
    const first = message.answers[0];
    replies.set(message.marker, [first.reply ?? `failed: ${first.error}`]);
    for (const other of message.answers.slice(1)) {
      if (other.status !== first.status || other.reply !== first.reply) {
        replies.get(message.marker)!.push(other.reply ?? `failed: ${other.error}`);
      }
    }
  }
  let duplicates = 0;
  let failedTurns = 0;
  for (const [marker, texts] of replies) {
    if (texts.length > 1) {
      duplicates += texts.length - 1;
      problems.push(`${marker} was answered ${texts.length} times`);
    }
    for (const text of texts) {
      const apology = text.startsWith("Sorry, I could not answer that") ||
        text.startsWith("failed: ");
      if (apology) failedTurns++;
      const other = _MARKER.exec(text)?.[0];
      if (!apology && other !== marker) {
        misrouted++;
        problems.push(`${marker} was answered with ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
  }

  // Transcripts: each message's user turn at most once, in order.
  let recordedTwice = 0;
  for (const session of sessions) {
    const seen = new Set<string>();
    let last = -1;
    for (const entry of transcripts.get(session.key) ?? []) {
      if (entry.role !== "user") continue;
      const marker = _MARKER.exec(entry.content)?.[0];
      const message = marker ? byMarker.get(marker) : undefined;
      if (!message || message.session !== session) {
        misrouted++;
        problems.push(`${session.key}'s transcript holds ${JSON.stringify(entry.content)}`);
        continue;
      }
      if (seen.has(marker!)) {
        recordedTwice++;
        problems.push(`${marker} is twice in ${session.key}'s transcript`);
      }
      if (message.k < last) {
        outOfOrder++;
        problems.push(`${marker} follows s${session.index}m${last} in the transcript`);
      }
      seen.add(marker!);
      last = Math.max(last, message.k);
    }
  }

  const lostMessages = good.filter((m) => !m.accepted || !replies.has(m.marker));
  for (const m of lostMessages.slice(0, 5)) {
    problems.push(
      `${m.marker} (${m.session.kind}) ${
        m.accepted ? "accepted, never answered" : "never accepted"
      }${turnsRun.has(m.marker) ? " (its turn ran)" : ""}`,
    );
  }
  const delivered = [...replies.values()].reduce((n, list) => n + Math.min(list.length, 1), 0);
  const figures: ChaosFigure[] = [
    {
      label: "deliveries sent (retries and duplicates included)",
      value: run.counts.sent,
      mustBeZero: false,
    },
    { label: "messages", value: good.length, mustBeZero: false },
    { label: "duplicate deliveries", value: run.counts.duplicatesSent, mustBeZero: false },
    { label: "malformed or badly signed deliveries", value: run.counts.badSent, mustBeZero: false },
    { label: "runtime kills (SIGKILL, process group)", value: run.counts.kills, mustBeZero: false },
    {
      label: "messages waiting or in a turn at the kills",
      value: run.counts.openAtKills,
      mustBeZero: false,
    },
    {
      label: "model faults injected (429 / 500 / stall)",
      value: run.injected.model429 + run.injected.model500 + run.injected.modelStall,
      mustBeZero: false,
    },
    { label: "Telegram 429s injected", value: run.injected.telegram429, mustBeZero: false },
    { label: "accepted messages", value: accepted.length, mustBeZero: false },
    { label: "turns run", value: turnsRun.size, mustBeZero: false },
    { label: "replies delivered", value: delivered, mustBeZero: false },
    { label: "of which failure notices (turn failed)", value: failedTurns, mustBeZero: false },
    { label: "messages lost", value: lostMessages.length, mustBeZero: true },
    { label: "duplicate replies", value: duplicates, mustBeZero: true },
    { label: "turns recorded twice", value: recordedTwice, mustBeZero: true },
    { label: "out-of-order turns within a session", value: outOfOrder, mustBeZero: true },
    {
      label: "replies or model calls mixing sessions",
      value: misrouted + mixedCalls,
      mustBeZero: true,
    },
    { label: "sessions left locked", value: run.locked.size, mustBeZero: true },
    { label: "5xx answers to bad input", value: run.counts.bad5xx, mustBeZero: true },
    { label: "turns started by bad input", value: badTurns, mustBeZero: true },
    {
      label: "unexpected 5xx to good input (other than 503)",
      value: run.counts.good5xx,
      mustBeZero: false,
    },
  ];
  for (const key of run.locked) problems.push(`${key} is still running or has messages queued`);
  return {
    ok: figures.every((f) => !f.mustBeZero || f.value === 0),
    figures,
    problems,
    seconds: run.seconds,
  };
}

/** The report as a markdown table. */
export function formatChaosReport(report: ChaosReport): string {
  const rows = report.figures.map((f) =>
    `| ${f.label}${f.mustBeZero ? " (must be 0)" : ""} | ${f.value.toLocaleString("en-US")} |`
  );
  return ["| figure | value |", "|---|---|", ...rows].join("\n");
}
