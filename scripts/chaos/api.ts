// The chaos run's HTTP senders: resend-until-answered, chat completions (plain, streamed, dropped) and runs with SSE subscribers; Deno.
import type { ChaosMessage } from "./plan.ts";

/** How the senders reach baton across restarts. */
export interface ChaosLink {
  url: string;
  apiKey: string;
  /** Resolves once the runtime is up (waits out a restart in progress). */
  up(): Promise<void>;
  /** Nothing is sent after this (ms since the epoch). */
  deadline: number;
  /** Every request sent, retries included, by way. */
  sent: (way: string) => void;
}

/** A final answer: status, headers and the body parsed as JSON when it is JSON. */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** How long a sender waits for one answer before it gives up and sends again, like a platform. */
const _REQUEST_TIMEOUT_MS = 30_000;
const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends until an answer that a platform or client would not retry: network errors, timeouts and
 * whatever `retryable` says (by default 429 and 5xx) are sent again with a growing pause. Null
 * when the deadline passed first.
 */
export async function sendUntil(
  link: ChaosLink,
  way: string,
  build: () => Promise<Request>,
  retryable: (answer: Answer) => boolean = (a) => a.status === 429 || a.status >= 500,
): Promise<Answer | null> {
  for (let attempt = 0; Date.now() < link.deadline; attempt++) {
    await link.up();
    link.sent(way);
    let answer: Answer;
    try {
      const timeout = Math.min(_REQUEST_TIMEOUT_MS, Math.max(1, link.deadline - Date.now()));
      const res = await fetch(await build(), { signal: AbortSignal.timeout(timeout) });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text.
      }
      answer = { status: res.status, headers: res.headers, body };
    } catch {
      // No answer, a broken connection (a kill) or a timeout: sent again.
      await _sleep(Math.min(100 * 2 ** attempt, 1_000));
      continue;
    }
    if (!retryable(answer)) return answer;
    await _sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
  return null;
}

/** A turn's failure answer (502/504/409, `x-should-retry: false`, or the webhook's with a session): final. */
export function isTurnFailure(answer: Answer): boolean {
  const error = (answer.body as { error?: { type?: unknown } })?.error;
  if (typeof error?.type !== "string") return false;
  if (answer.headers.get("x-should-retry") === "false") return true;
  return (answer.status === 502 || answer.status === 504) && "session" in (answer.body as object);
}

function _chatRequest(link: ChaosLink, message: ChaosMessage, stream: boolean): Request {
  return new Request(`${link.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${link.apiKey}`,
      "x-session-id": message.session.name,
      // The same key and body on every attempt: a retry gets the first request's turn.
      "idempotency-key": `chaos-${message.session.name}-${message.marker}`,
    },
    body: JSON.stringify({
      model: "chaos",
      messages: [{ role: "user", content: message.text }],
      ...(stream ? { stream: true } : {}),
    }),
  });
}

/** One SSE event as read: its `event:` name (or "message") and its data (JSON when it parses). */
export interface SseRead {
  event: string;
  data: unknown;
}

/**
 * Reads SSE events from `res` until `stop(event)` says so or the stream ends; true when it ended
 * by `stop`, false when it ended or broke first. Comments (keep-alives) are skipped.
 */
export async function readSse(
  res: Response,
  onEvent: (event: SseRead) => boolean,
): Promise<boolean> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (!data.length) continue;
        const text = data.join("\n");
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Kept as text ("[DONE]").
        }
        if (onEvent({ event, data: parsed })) return true;
      }
    }
  } catch {
    return false;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Reads a chat completion stream to its end: the content, or the error it ended with; null if cut. */
async function _readCompletionStream(
  res: Response,
): Promise<{ reply?: string; error?: string } | null> {
  let content = "";
  let error: string | undefined;
  const ended = await readSse(res, ({ data }) => {
    if (data === "[DONE]") return true;
    const chunk = data as {
      choices?: { delta?: { content?: string } }[];
      error?: { type?: string };
    };
    if (chunk?.error) error = chunk.error.type ?? "error";
    content += chunk?.choices?.[0]?.delta?.content ?? "";
    return false;
  });
  if (!ended) return null;
  return error ? { error } : { reply: content };
}

/**
 * Sends one chat completion the way `message.chatMode` says and records its answer: a plain
 * request and a stream are sent until they end (a stream cut by a kill is asked again under
 * its Idempotency-Key); a "disconnect" client drops its stream after the first bytes.
 */
export async function sendChat(
  link: ChaosLink,
  message: ChaosMessage,
  random: () => number,
): Promise<void> {
  const mode = message.chatMode;
  if (mode === "plain") {
    const answer = await sendUntil(
      link,
      "chat",
      () => Promise.resolve(_chatRequest(link, message, false)),
      (a) => !isTurnFailure(a) && (a.status === 429 || a.status >= 500),
    );
    if (!answer) return;
    const body = answer.body as {
      choices?: { message?: { content?: string } }[];
      error?: { type?: string };
    };
    if (answer.status === 200) {
      message.answers.push({ status: 200, reply: body.choices?.[0]?.message?.content ?? "" });
    } else {
      message.answers.push({
        status: answer.status,
        error: body.error?.type ?? `HTTP ${answer.status}`,
      });
    }
    message.accepted = answer.status === 200 || isTurnFailure(answer);
    if (message.accepted) message.answeredAt ??= Date.now();
    return;
  }
  for (let attempt = 0; Date.now() < link.deadline; attempt++) {
    await link.up();
    link.sent("chat");
    const aborter = new AbortController();
    const timer = setTimeout(() => aborter.abort(), 30_000);
    try {
      const res = await fetch(_chatRequest(link, message, true), { signal: aborter.signal });
      if (res.status !== 200) {
        const text = await res.text();
        if (res.status === 429 || res.status >= 500) throw new Error(text);
        message.answers.push({ status: res.status, error: text.slice(0, 80) });
        return;
      }
      if (mode === "disconnect") {
        // The stream is open, so the message is stored: drop it after a moment, mid-turn.
        message.accepted = true;
        await _sleep(Math.floor(random() * 400));
        aborter.abort();
        await res.body?.cancel().catch(() => {});
        message.dropped++;
        return;
      }
      const read = await _readCompletionStream(res);
      if (read) {
        message.accepted = true;
        message.answeredAt ??= Date.now();
        message.answers.push({ status: 200, ...read });
        return;
      }
    } catch {
      // Refused, cut off or timed out: asked again.
    } finally {
      clearTimeout(timer);
    }
    await _sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
}

/** Asks a dropped stream again (same key and body) and reads it to the end: how its turn ended. */
export async function replayChat(link: ChaosLink, message: ChaosMessage): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const res = await fetch(_chatRequest(link, message, true), {
        signal: AbortSignal.timeout(15_000),
      });
      if (res.status !== 200) {
        message.answers.push({ status: res.status, error: (await res.text()).slice(0, 80) });
        return;
      }
      const read = await _readCompletionStream(res);
      if (read) {
        message.answers.push({ status: 200, ...read });
        return;
      }
    } catch {
      // Asked again.
    }
    await _sleep(500);
  }
}

/** Starts a run (sent until 202) and its live subscribers; resolves once it was accepted. */
export async function startRun(
  link: ChaosLink,
  message: ChaosMessage,
  background: Promise<void>[],
): Promise<void> {
  const answer = await sendUntil(link, "runs", () =>
    Promise.resolve(
      new Request(`${link.url}/v1/runs`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${link.apiKey}`,
          "idempotency-key": `chaos-${message.session.name}-${message.marker}`,
        },
        body: JSON.stringify({ input: message.text, session: message.session.name }),
      }),
    ));
  if (!answer) return;
  const runId = (answer.body as { run_id?: string })?.run_id;
  if (answer.status !== 202 || !runId) {
    message.answers.push({
      status: answer.status,
      error: JSON.stringify(answer.body).slice(0, 80),
    });
    return;
  }
  message.accepted = true;
  // Every copy must name the same run (its Idempotency-Key): a second id is a second run.
  message.answers.push({ status: 202, reply: runId });
  message.runId ??= runId;
  for (const [i, kind] of message.subscribers.entries()) {
    const leaveAfter = kind === "leave" ? 1 + i : Infinity;
    // A late one joins after the stored events piled up (and perhaps after a kill).
    const wait = kind === "late" ? 1_000 + 1_500 * i : 0;
    background.push(_sleep(wait).then(() => _subscribe(link, message, leaveAfter)));
  }
}

/**
 * Follows a run's events on one connection after another: each connection's events are kept;
 * a connection cut by a kill is opened again (from the start: stored events come first) until a
 * final event, or until `leaveAfter` events were read (a client that leaves early).
 */
async function _subscribe(
  link: ChaosLink,
  message: ChaosMessage,
  leaveAfter: number,
): Promise<void> {
  for (let attempt = 0; Date.now() < link.deadline; attempt++) {
    await link.up();
    const seen: { type: string; data: Record<string, unknown> }[] = [];
    message.connections.push(seen);
    const done = await readRunEvents(link, message.runId!, seen, leaveAfter);
    if (seen.some((e) => FINAL_EVENTS.has(e.type))) message.answeredAt ??= Date.now();
    if (done) return;
    await _sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
}

/**
 * Reads run `runId`'s events into `seen` on one connection; true when it saw a final event or
 * `leaveAfter` events (and left), false when the connection failed or ended early.
 */
export async function readRunEvents(
  link: ChaosLink,
  runId: string,
  seen: { type: string; data: Record<string, unknown> }[],
  leaveAfter = Infinity,
  timeoutMs = 60_000,
): Promise<boolean> {
  try {
    const res = await fetch(`${link.url}/v1/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${link.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return false;
    }
    return await readSse(res, ({ event, data }) => {
      const record = (data ?? {}) as Record<string, unknown>;
      seen.push({ type: typeof record.type === "string" ? record.type : event, data: record });
      return FINAL_EVENTS.has(event) || seen.length >= leaveAfter;
    });
  } catch {
    return false;
  }
}

/** The events that end a run's stream. */
export const FINAL_EVENTS: ReadonlySet<string> = new Set([
  "run.completed",
  "run.failed",
  "run.cancelled",
]);
