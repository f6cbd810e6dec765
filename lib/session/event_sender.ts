// Posts the session's stored events (event_outbox.ts) through an events sink, retried with back-off on 5xx, 429 and timeouts; runtime-neutral.
import type { SendResult } from "../chat/mod.ts";
import { errorText, log } from "../runtime/mod.ts";
import type { EventOutboxStore, StoredEvent } from "./event_outbox.ts";
import type { SessionDb } from "./session_db.ts";

/**
 * Where events go (`EVENTS_WEBHOOK_URL`: lib/platforms/events_webhook.ts): one post of a stored
 * event, answered like a platform's send — retryable for a rate limit, a 5xx or no answer.
 */
export interface EventSink {
  post(event: StoredEvent): Promise<SendResult>;
}

/** What the sender needs. */
export interface EventSenderOptions {
  /** Longest wait, back-offs and Retry-After included, before an event is given up. */
  maxWaitMs: number;
  now: () => number;
}

/**
 * Sends every unsent event, oldest first, one flush at a time. An event is posted until its sink
 * takes it, answers a failure that is final (a 4xx), or the wait budget is spent; a crash leaves
 * it unsent and the next instance's first drain posts it again with the same `webhook-id` (the
 * receiver dedups): delivered at least once, stored exactly once.
 */
export class EventSender {
  readonly #db: SessionDb;
  readonly #store: EventOutboxStore;
  readonly #sink: EventSink;
  readonly #options: EventSenderOptions;
  #flushing: Promise<void> | null = null;
  /** A flush asked for while one runs: it looks again once done (a row it read past). */
  #again = false;

  constructor(
    db: SessionDb,
    store: EventOutboxStore,
    sink: EventSink,
    options: EventSenderOptions,
  ) {
    this.#db = db;
    this.#store = store;
    this.#sink = sink;
    this.#options = options;
  }

  /** Sends every unsent event; never rejects (failures are recorded and logged). */
  flush(): Promise<void> {
    if (this.#flushing) {
      this.#again = true;
      return this.#flushing;
    }
    this.#flushing = this.#flush().catch((error) => {
      log.error("events not sent", { error: errorText(error) });
    }).finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    do {
      this.#again = false;
      for (const event of this.#store.unsent()) await this.#send(event);
    } while (this.#again);
  }

  async #send(event: StoredEvent): Promise<void> {
    const { maxWaitMs, now } = this.#options;
    let waited = 0;
    for (let tries = 0;; tries++) {
      this.#db.transaction((tx) => this.#store.countAttempt(tx, event.id));
      let result: SendResult;
      try {
        result = await this.#sink.post(event);
      } catch (error) {
        result = { ok: false, status: 0, retryable: true, message: errorText(error) };
      }
      if (result.ok) {
        this.#db.transaction((tx) => this.#store.markDone(tx, event.id, null, now()));
        log.debug("event sent", { webhook_id: event.webhookId });
        return;
      }
      const wait = result.retryAfterMs ?? Math.min(500 * 2 ** tries, 8_000);
      if (!result.retryable || waited + wait > maxWaitMs) {
        this.#db.transaction((tx) => this.#store.markDone(tx, event.id, result.message, now()));
        log.error("event not delivered", { webhook_id: event.webhookId, error: result.message });
        return;
      }
      log.warn("event send failed; retrying", {
        webhook_id: event.webhookId,
        error: result.message,
      });
      waited += wait;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
