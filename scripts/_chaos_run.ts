// The chaos run: baton under `wrangler dev`, faulty fakes, duplicated and bad deliveries, SIGKILLs; Deno.
import { signStandardWebhook } from "../lib/standard_webhooks.ts";
import { type FakeStep, startFakeLlm } from "../test/_support/fake_llm.ts";
import { startFakePlatform } from "../test/_support/fake_platform.ts";
import {
  CHAOS_MARKER,
  type ChaosBadDelivery,
  type ChaosKind,
  type ChaosMessage,
  type ChaosReport,
  type ChaosSession,
  verifyChaos,
} from "./_chaos_report.ts";
import { freePort, startWranglerDev, type WranglerDev } from "./_wrangler_dev.ts";

export { type ChaosFigure, type ChaosReport, formatChaosReport } from "./_chaos_report.ts";

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

const _API_KEY = "chaos-gateway-key";
const _WEBHOOK_SECRET = "whsec_" + btoa("baton-chaos-webhook-secret-32byt");
const _TELEGRAM_SECRET = "chaos-telegram-secret";
const _BOT_TOKEN = "424242:chaos-bot-token";

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

/** How long a sender waits for one answer before it gives up and sends again, like a platform. */
const _REQUEST_TIMEOUT_MS = 30_000;
const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function _plan(options: Required<Omit<ChaosOptions, "log">>, random: () => number): ChaosSession[] {
  const sessions: ChaosSession[] = [];
  for (let i = 0; i < options.sessions; i++) {
    const kind: ChaosKind = i % 2 === 0 ? "webhook" : "telegram";
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
      });
      continue;
    }
    const k = session.messages.length;
    const marker = `s${session.index}m${k}`;
    const message: ChaosMessage = {
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
    if (!CHAOS_MARKER.test(req.lastUserText)) return { kind: "text", text: req.lastUserText };
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
      // Senders are not checked here: the chaos run and benches measure the message path itself.
      ACCESS_POLICY: "open",
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
    partsInDoubt: 0,
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
    const pendingWebhooks = new Set<ChaosMessage>();

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
          const timeout = Math.min(_REQUEST_TIMEOUT_MS, Math.max(1, deadline - Date.now()));
          res = await fetch(await build(), { signal: AbortSignal.timeout(timeout) });
          text = await res.text();
        } catch {
          // No answer, a broken connection (a kill) or a timeout: the platform sends it again.
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

    const webhookRequest = async (message: ChaosMessage) => {
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

    const telegramUpdate = (message: ChaosMessage) => ({
      update_id: message.updateId,
      message: {
        message_id: message.k + 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: message.session.chatId, type: "private", first_name: "Chaos" },
        from: { id: message.session.chatId, is_bot: false, first_name: "Chaos" },
        text: message.text,
      },
    });

    const telegramRequest = (message: ChaosMessage) =>
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

    const deliverOnce = async (message: ChaosMessage): Promise<void> => {
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
    const deliver = async (message: ChaosMessage): Promise<void> => {
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

    const deliverBad = async (bad: ChaosBadDelivery): Promise<void> => {
      counts.badSent++;
      const answer = await send(() => _badRequest(url, bad), () => false);
      if (!answer) return;
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
    // The runtime logs each reply part it would not resend after a crash (it may be shown already).
    const wranglerLog = await Deno.readTextFile(devOptions.logFile).catch(() => "");
    counts.partsInDoubt = wranglerLog.split("reply part not resent").length - 1;
    const report = verifyChaos({
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

async function _badRequest(url: string, bad: ChaosBadDelivery): Promise<Request> {
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
