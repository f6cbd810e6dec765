// The chaos run's approvals: the fake model's asking step, the fake user who answers (at once, twice, late or never), and their checks; Deno.
import type { FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";
import { type ChaosLink, sendUntil } from "./api.ts";
import { type ChaosMessage, type ChaosSession, questionToken } from "./plan.ts";
import type { Tally } from "./tally.ts";
import type { ChaosObservation, ShownPost } from "./observation.ts";

/** baton's APPROVAL_TIMEOUT_MS in the chaos run: a question nobody answers soon counts as denied. */
export const APPROVAL_TIMEOUT_MS = 5_000;

/** Row labels of the approval checks. */
export const APPROVAL_LABELS = {
  asked: "turns that asked for approval (questions seen)",
  ranTwice: "approved calls run twice",
  unapproved: "calls run without an approval",
  answeredTwice: "questions answered twice",
} as const;

const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const _FINAL = /^(completed|failed|cancelled)$/;
/** How long a fake user waits for a question (or its turn's end) before giving up. */
const _PATIENCE_MS = 90_000;

/**
 * The fake model's step for a message whose turn asks: the call of the asking tool (its
 * arguments name the message, so the question does), or null once the call has its result or
 * denial (the usual echo follows, carrying the marker).
 */
export function askingStep(
  req: FakeModelRequest,
  session: ChaosSession | undefined,
  k: number,
): FakeModelStep | null {
  const message = session?.messages[k];
  if (!message?.approval || req.body?.messages?.at(-1)?.role !== "user") return null;
  return { kind: "tool_call", name: "session_info", args: { about: questionToken(message) } };
}

/**
 * The API caller of an asking run: polls the run and, while it waits for approval, answers
 * "once" (twice at once, or after a pause, as its mode says); "never" leaves it to time out.
 * Each answer's status is kept on the message for the checks.
 */
export async function answerRunApprovals(link: ChaosLink, m: ChaosMessage): Promise<void> {
  if (m.approval === "never") return;
  const started = Date.now();
  const send = () =>
    sendUntil(link, "runs", () =>
      Promise.resolve(
        new Request(`${link.url}/v1/runs/${m.runId}/approval`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${link.apiKey}` },
          body: JSON.stringify({ choice: "once" }),
        }),
      ));
  while (Date.now() < Math.min(link.deadline, started + _PATIENCE_MS)) {
    await link.up();
    const status = await _runStatus(link, m.runId!);
    if (status !== null && _FINAL.test(status)) return;
    if (status === "waiting_for_approval") {
      if (m.approval === "late") await _sleep(1_000 + (m.updateId % 7) * 300);
      const answers = await Promise.all(m.approval === "twice" ? [send(), send()] : [send()]);
      for (const answer of answers) if (answer) m.approvalAnswers.push(answer.status);
      await _sleep(1_000); // the turn resumes; a question asked after a rerun is answered next time
    }
    await _sleep(250);
  }
}

/**
 * The Telegram user of an asking message: clicks "Approve once" under each question that names
 * it (twice, or after a pause, as its mode says) until its reply or a failure notice shows;
 * "never" leaves the question to time out.
 */
export async function clickApprovals(
  link: ChaosLink,
  m: ChaosMessage,
  shown: ShownPost[],
  secret: string,
): Promise<void> {
  if (m.approval === "never") return;
  const chat = String(m.session.chatId);
  const token = questionToken(m);
  const clicked = new Set<string>();
  let since = Date.now();
  while (Date.now() < Math.min(link.deadline, since + _PATIENCE_MS)) {
    const posts = shown.filter((p) => p.way === "telegram" && p.chat === chat);
    if (
      posts.some((p) =>
        p.text.includes(m.marker) || (p.replyTo === m.k + 1 && p.text.startsWith("Sorry"))
      )
    ) return;
    for (const post of posts) {
      const once = post.buttons?.[0];
      if (!once || !post.text.includes(token) || clicked.has(once)) continue;
      clicked.add(once);
      since = Date.now();
      if (m.approval === "late") await _sleep(1_000 + (m.updateId % 7) * 300);
      const clicks = m.approval === "twice" ? 2 : 1;
      await Promise.all(
        Array.from(
          { length: clicks },
          () =>
            sendUntil(
              link,
              "telegram",
              () => Promise.resolve(_click(link.url, secret, m, post, once)),
            ),
        ),
      );
    }
    await _sleep(250);
  }
}

let _clicks = 0;

/** A Telegram callback query: the message's sender clicks `data` under `post`. */
function _click(
  url: string,
  secret: string,
  m: ChaosMessage,
  post: ShownPost,
  data: string,
): Request {
  const n = ++_clicks;
  const chat = { id: m.session.chatId, type: "private", first_name: "Chaos" };
  const update = {
    update_id: 50_000_000 + n,
    callback_query: {
      id: `chaos-click-${m.session.index}-${m.k}-${n}`,
      from: { id: m.session.chatId, is_bot: false, first_name: "Chaos" },
      message: { message_id: post.messageId ?? 0, date: Math.floor(Date.now() / 1000), chat },
      chat_instance: String(m.session.chatId),
      data,
    },
  };
  return new Request(`${url}/webhooks/telegram`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
    body: JSON.stringify(update),
  });
}

async function _runStatus(link: ChaosLink, runId: string): Promise<string | null> {
  try {
    const res = await fetch(`${link.url}/v1/runs/${runId}`, {
      headers: { authorization: `Bearer ${link.apiKey}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return null;
    }
    return String(((await res.json()) as { status?: unknown }).status);
  } catch {
    return null; // a kill: asked again
  }
}

/**
 * The approval checks. Runs: from each run's whole event stream, no call starts twice, none
 * starts in a run whose user never answers, and no question is answered twice (by events, and by
 * the 200s the caller got). Telegram: from the model's calls, no two calls of one message's turn
 * ran (a rerun after an approval would run a second), and none ran for a message never answered.
 */
export function verifyApprovals(obs: ChaosObservation, tally: Tally): void {
  const ways = obs.ways.filter((w) => w === "telegram" || w === "runs");
  tally.row(APPROVAL_LABELS.asked, false, ways);
  for (const label of [APPROVAL_LABELS.ranTwice, APPROVAL_LABELS.unapproved]) {
    tally.row(label, true, ways);
  }
  tally.row(APPROVAL_LABELS.answeredTwice, true, ways);
  const asking = obs.sessions.flatMap((s) => s.messages).filter((m) => m.approval);
  for (const m of asking.filter((m) => m.session.way === "runs" && m.runId)) {
    const events = obs.late.get(m)?.events ?? [];
    const requests = events.filter((e) => e.type === "approval.request");
    if (requests.length) tally.add(APPROVAL_LABELS.asked, "runs");
    const started = events.filter((e) => e.type === "tool.started").length;
    const where = `${m.marker} ${m.runId} (${m.approval})`;
    if (started > 1) {
      tally.add(APPROVAL_LABELS.ranTwice, "runs", 1, `${where}: tool.started ${started} times`);
    }
    if (m.approval === "never" && started > 0) {
      tally.add(APPROVAL_LABELS.unapproved, "runs", 1, `${where}: ran, never answered`);
    }
    const responded = new Map<string, number>();
    for (const e of events.filter((e) => e.type === "approval.responded")) {
      const call = String(e.data.call_id);
      responded.set(call, (responded.get(call) ?? 0) + 1);
    }
    const oks = m.approvalAnswers.filter((s) => s === 200).length;
    if ([...responded.values()].some((n) => n > 1) || oks > requests.length) {
      tally.add(
        APPROVAL_LABELS.answeredTwice,
        "runs",
        1,
        `${where}: ${oks} answers taken for ${requests.length} questions`,
      );
    }
    const refused = m.approvalAnswers.filter((s) => s !== 200 && s !== 409);
    if (refused.length) obs.problems.push(`${where}: approval answered ${refused.join(", ")}`);
  }
  const ranCalls = _telegramToolRuns(obs, asking);
  for (const m of asking.filter((m) => m.session.way === "telegram")) {
    const token = questionToken(m);
    const chat = String(m.session.chatId);
    if (obs.shown.some((p) => p.way === "telegram" && p.chat === chat && p.text.includes(token))) {
      tally.add(APPROVAL_LABELS.asked, "telegram");
    }
    const ran = ranCalls.get(m)?.size ?? 0;
    const where = `${m.marker} (telegram, ${m.approval})`;
    if (ran > 1) tally.add(APPROVAL_LABELS.ranTwice, "telegram", 1, `${where}: ${ran} calls ran`);
    if (m.approval === "never" && ran > 0) {
      tally.add(APPROVAL_LABELS.unapproved, "telegram", 1, `${where}: ran, never answered`);
    }
  }
}

/** Per asking Telegram message, the ids of its tool calls that ran (their result is the context). */
function _telegramToolRuns(
  obs: ChaosObservation,
  asking: ChaosMessage[],
): Map<ChaosMessage, Set<string>> {
  const byMarker = new Map(asking.map((m) => [m.marker, m]));
  const ran = new Map<ChaosMessage, Set<string>>();
  for (const request of obs.modelRequests) {
    const marker = /\bs\d+m\d+\b/.exec(request.lastUserText)?.[0];
    const m = marker ? byMarker.get(marker) : undefined;
    if (!m || m.session.way !== "telegram") continue;
    const ids = ran.get(m) ?? new Set<string>();
    // Only this turn's messages: the history before its user message holds earlier turns' calls.
    const messages: { role: string; content: unknown; tool_call_id?: string }[] =
      request.body?.messages ?? [];
    const own = messages.slice(messages.findLastIndex((x) => x.role === "user") + 1);
    for (const message of own) {
      if (message.role === "tool" && String(message.content).startsWith('{"platform"')) {
        ids.add(String(message.tool_call_id));
      }
    }
    ran.set(m, ids);
  }
  return ran;
}
