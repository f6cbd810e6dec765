// Starts, follows, stops and answers one chat's run over the runs API, surviving reloads (sessionStorage); browser.
import { ApiClient, ApiError, errorText } from "./api_client.ts";
import { type ActiveRun, activeRun, saveActiveRun } from "./console_storage.ts";
import { FINAL_PHASES, foldRunEvent, type RunView, SENDING } from "./run_state.ts";
import { readSse } from "./sse_reader.ts";

/** What the chat shows of the run it follows. */
export interface LiveRun {
  input: string;
  view: RunView;
  /** Stop was asked and the run has not ended yet. */
  stopping: boolean;
  runId: string | null;
}

/** Callbacks of a follower. */
export interface FollowerEvents {
  /** The run changed (or, with null, nothing is followed). */
  onChange(run: LiveRun | null): void;
  /** The run ended (its final event), or could not start. */
  onEnd(run: LiveRun): void;
  /** The server named the session's key (the first run of a new conversation). */
  onSessionKey(key: string): void;
}

/**
 * Follows the run of one chat (API session `sessionId`). The run is remembered in sessionStorage
 * from before its request leaves, with an Idempotency-Key, so that a reload at any moment finds
 * the same run — resending the same request if its answer was lost — and never starts a second.
 */
export class RunFollower {
  readonly #api: ApiClient;
  readonly #id: string;
  readonly #events: FollowerEvents;
  #live: LiveRun | null = null;
  #abort: AbortController | null = null;
  #disposed = false;

  constructor(api: ApiClient, sessionId: string, events: FollowerEvents) {
    this.#api = api;
    this.#id = sessionId;
    this.#events = events;
  }

  /** Whether a run is being followed (and not yet ended). */
  get busy(): boolean {
    return this.#live !== null && !FINAL_PHASES.has(this.#live.view.phase);
  }

  /** Picks up the run this chat followed before a reload, if any. */
  resume(): void {
    const active = activeRun(this.#id);
    if (!active) return;
    this.#show({
      input: active.input,
      view: SENDING,
      stopping: !!active.stopRequested,
      runId: null,
    });
    if (active.runId) void this.#follow(active.runId);
    else void this.#create(active);
  }

  /** Sends `input` as a new run; ignored while one runs. */
  send(input: string): void {
    if (this.busy) return;
    const active: ActiveRun = { input, idempotencyKey: crypto.randomUUID() };
    saveActiveRun(this.#id, active);
    this.#show({ input, view: SENDING, stopping: false, runId: null });
    void this.#create(active);
  }

  /**
   * Stops the run at whatever point it is: before its request was answered (it is stopped as
   * soon as its id is known), queued behind another, running, or waiting for an approval.
   */
  stop(): void {
    const active = activeRun(this.#id);
    if (!active || !this.busy) return;
    if (this.#live) this.#show({ ...this.#live, stopping: true });
    if (active.runId) void this.#postStop(active.runId);
    else saveActiveRun(this.#id, { ...active, stopRequested: true });
  }

  /** Answers the approval question the run waits on. */
  async answer(choice: string): Promise<void> {
    const runId = this.#live?.runId;
    if (!runId) return;
    try {
      await this.#api.post(`/v1/runs/${runId}/approval`, { choice });
    } catch (error) {
      // 409: answered elsewhere, or the run moved on; the event stream shows where it is.
      if (!(error instanceof ApiError && error.status === 409)) this.#fail(errorText(error), false);
    }
  }

  /** Stops following (the page goes elsewhere); the run itself goes on. */
  dispose(): void {
    this.#disposed = true;
    this.#abort?.abort();
  }

  async #create(active: ActiveRun): Promise<void> {
    let answer: { run_id: string; session: string; session_key?: string };
    for (let attempt = 0;; attempt++) {
      try {
        answer = await this.#api.post("/v1/runs", { input: active.input, session: this.#id }, {
          "Idempotency-Key": active.idempotencyKey,
        });
        break;
      } catch (error) {
        // A lost answer is asked again with the same key: the same run, never a second.
        const retry = !(error instanceof ApiError) || error.status >= 500;
        if (this.#disposed) return;
        if (!retry || attempt >= 4) {
          saveActiveRun(this.#id, null);
          this.#fail(errorText(error), true);
          return;
        }
        await _sleep(500 * 2 ** attempt);
      }
    }
    if (this.#disposed) return;
    if (answer.session_key) this.#events.onSessionKey(answer.session_key);
    const now = activeRun(this.#id) ?? active; // Stop may have been asked meanwhile
    saveActiveRun(this.#id, { ...now, runId: answer.run_id });
    if (now.stopRequested) void this.#postStop(answer.run_id);
    await this.#follow(answer.run_id);
  }

  /** Reads the run's events (all stored ones first: a late join replays), reattaching when cut. */
  async #follow(runId: string): Promise<void> {
    if (this.#live) this.#show({ ...this.#live, runId });
    for (let attempt = 0; !this.#disposed; attempt++) {
      const abort = new AbortController();
      this.#abort = abort;
      try {
        const body = await this.#api.stream(`/v1/runs/${runId}/events`, abort.signal);
        let view = SENDING;
        for await (const message of readSse(body)) {
          const data = JSON.parse(message.data) as Record<string, unknown>;
          if (message.event === "message") continue; // the relay's "ended early" note: reattach
          view = foldRunEvent(view, message.event, data);
          if (this.#live) this.#show({ ...this.#live, view });
          if (FINAL_PHASES.has(view.phase)) return this.#end();
          attempt = 0;
        }
      } catch (error) {
        if (this.#disposed) return;
        if (error instanceof ApiError && error.status === 404) {
          saveActiveRun(this.#id, null);
          return this.#fail("the run is no longer known to the server", true);
        }
      }
      await _sleep(Math.min(500 * 2 ** attempt, 5_000));
    }
  }

  async #postStop(runId: string): Promise<void> {
    try {
      await this.#api.post(`/v1/runs/${runId}/stop`, {});
    } catch (error) {
      // 409: it had ended already; its final event is on the stream.
      if (!(error instanceof ApiError && error.status === 409)) this.#fail(errorText(error), false);
    }
  }

  #end(): void {
    saveActiveRun(this.#id, null);
    const live = this.#live;
    if (live) {
      this.#show({ ...live, stopping: false });
      this.#events.onEnd({ ...live, stopping: false });
    }
  }

  /** Shows `message`; with `ended`, the run is over for this page (it never started, or is gone). */
  #fail(message: string, ended: boolean): void {
    const live = this.#live ?? { input: "", view: SENDING, stopping: false, runId: null };
    if (!ended) {
      return this.#show({ ...live, stopping: false, view: { ...live.view, error: message } });
    }
    const failed: LiveRun = {
      ...live,
      stopping: false,
      view: { ...live.view, phase: "failed", error: message },
    };
    this.#show(failed);
    this.#events.onEnd(failed);
  }

  #show(live: LiveRun | null): void {
    this.#live = live;
    if (!this.#disposed) this.#events.onChange(live);
  }
}

function _sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
