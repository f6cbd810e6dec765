// Bench rig: the fake model, fake Telegram and every Worker a phase measures, with timed calls to them; Deno.
import { type FakeModel, startFakeModel } from "../../lib/testing/fake_model.ts";
import type { BaselineBuild } from "./baseline.ts";
import { postChat, postChatStream, type Sample, type StreamSample } from "./client.ts";
import { miniflareTmpDir } from "./proc.ts";
import { r1, type Report } from "./report.ts";
import {
  sendTelegramUpdate,
  startTelegramObserver,
  type TelegramObserver,
  type TelegramSample,
  TG_SECRET,
  TG_TOKEN,
} from "./telegram.ts";
import { type BenchWorker, bundleWorker, startBundled } from "./worker.ts";

/** The bench's API key. */
export const API_KEY = "bench-key";
/** The bench batons' per-session queue limit (default 32): above the 200-message burst. */
export const MAX_QUEUED = 256;

/** One running baton build: the working tree's ("baton") or the baseline ref's ("baseline"). */
export interface Baton {
  name: "baton" | "baseline";
  worker: BenchWorker;
  /** Its bundle, to start fresh copies from. */
  scriptPath: string;
  /** Records this build's figures: as they are for "baton", under `baseline_` for "baseline". */
  report: Report;
  /** The baseline's upload (`BaselineBuild.uploadPath`), for the start-up phase. */
  uploadPath?: string;
}

/** A step of the run: measures on the rig and records into the report. */
export interface Phase {
  title: string;
  run: (rig: Rig, report: Report) => Promise<void>;
  /** Whether it also measures the baseline's baton (side by side) when there is one. */
  baseline?: boolean;
}

/** Requests sent, for the one-model-call-per-turn check. */
export interface Counts {
  /** Turns asked of any baton build (one model call each). */
  batonTurns: number;
  /** Model calls made by the floor, the peer or the bench itself. */
  otherModelCalls: number;
}

/** baton's Durable Object binding, as in wrangler.toml. */
const _BATON_OBJECTS = {
  SESSIONS: "SessionDO",
  ACCESS: "AccessDO",
  CONVERSATIONS: "ConversationPointerDO",
  IDEMPOTENCY_KEYS: "IdempotencyKeyDO",
};

function _batonVars(fake: FakeModel, telegram: TelegramObserver): Record<string, string> {
  return {
    LLM_BASE_URL: fake.url,
    LLM_API_KEY: "x",
    GATEWAY_API_KEY: API_KEY,
    MAX_QUEUED: String(MAX_QUEUED),
    TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
    TELEGRAM_BOT_TOKEN: TG_TOKEN,
    TELEGRAM_API_ROOT: telegram.url,
    // Senders are not checked here: the chaos run and benches measure the message path itself.
    ACCESS_POLICY: "open",
  };
}

/**
 * Everything a phase measures against: one fake model and one fake Telegram for all, the
 * working tree's baton, the baseline's baton when asked for, the floor Worker (model call only,
 * and an empty Durable Object) and the Telegram peer Worker. Failed requests go to the report;
 * `close()` stops everything.
 */
export class Rig {
  readonly counts: Counts = { batonTurns: 0, otherModelCalls: 0 };
  readonly #report: Report;
  readonly #closers: (() => Promise<void>)[];

  private constructor(
    readonly fake: FakeModel,
    readonly telegram: TelegramObserver,
    /** The working tree's baton, then the baseline's when there is one. */
    readonly batons: Baton[],
    readonly floor: BenchWorker,
    readonly peer: BenchWorker,
    report: Report,
    closers: (() => Promise<void>)[],
  ) {
    this.#report = report;
    this.#closers = closers;
  }

  /** Starts the fakes and the Workers (bundled from the working tree), one workerd each. */
  static async start(report: Report, baseline?: BaselineBuild): Promise<Rig> {
    const closers: (() => Promise<void>)[] = [];
    try {
      const fake = await startFakeModel();
      closers.push(() => fake.close());
      const telegram = startTelegramObserver();
      closers.push(() => telegram.close());
      const started = async (
        scriptPath: string,
        vars: Record<string, string>,
        durableObjects: Record<string, string> = _BATON_OBJECTS,
      ) => {
        const worker = await startBundled(scriptPath, { vars, durableObjects });
        closers.push(() => worker.dispose());
        return worker;
      };
      const batonScript = await bundleWorker(
        "functions/index.ts",
        ".tmp/bench-build/baton/index.js",
      );
      const batons: Baton[] = [{
        name: "baton",
        worker: await started(batonScript, _batonVars(fake, telegram)),
        scriptPath: batonScript,
        report,
      }];
      if (baseline) {
        batons.push({
          name: "baseline",
          worker: await started(baseline.scriptPath, _batonVars(fake, telegram)),
          scriptPath: baseline.scriptPath,
          report: report.prefixed("baseline_", "baseline: "),
          ...(baseline.uploadPath ? { uploadPath: baseline.uploadPath } : {}),
        });
      }
      const model = { LLM_BASE_URL: fake.url, LLM_API_KEY: "x" };
      const chat = {
        ...model,
        TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
        TELEGRAM_BOT_TOKEN: TG_TOKEN,
        TELEGRAM_API_ROOT: telegram.url,
      };
      // With its empty SQLite object, for the runtime-floor phase and a chat's floor.
      const floor = await started(
        await bundleWorker("scripts/bench/floor_worker.ts", ".tmp/bench-build/floor/index.js"),
        chat,
        { EMPTY: "EmptyDO" },
      );
      const peer = await started(
        await bundleWorker(
          "scripts/bench/peer_telegram_worker.ts",
          ".tmp/bench-build/peer/index.js",
        ),
        chat,
        {},
      );
      return new Rig(fake, telegram, batons, floor, peer, report, closers);
    } catch (e) {
      await Rig.#closeAll(closers);
      throw e;
    }
  }

  /** The working tree's baton. */
  get baton(): Baton {
    return this.batons[0];
  }

  /** One chat completion through `baton` on API session `session` (`client`: see `postChat`). */
  async turn(
    baton: Baton,
    session: string,
    text: string,
    client?: Deno.HttpClient,
  ): Promise<Sample> {
    this.counts.batonTurns++;
    const url = new URL("v1/chat/completions", baton.worker.url).href;
    return this.#checked(await postChat(url, this.#headers(session), text, client));
  }

  /** The same body through the floor Worker, which only calls the model. */
  async floorCall(text: string): Promise<Sample> {
    this.counts.otherModelCalls++;
    return this.#checked(
      await postChat(this.floor.url, { "content-type": "application/json" }, text),
    );
  }

  /**
   * One streamed turn through a baton (on its API session "bench-stream"), through the floor
   * Worker (the model's SSE relayed), through the floor Worker's warm object (`/stream-object`:
   * a claim written, the model's stream relayed as NDJSON over RPC, a write), or straight to the
   * fake model.
   */
  async stream(via: Baton | "floor" | "object" | "model", text: string): Promise<StreamSample> {
    if (typeof via !== "string") {
      this.counts.batonTurns++;
      const url = new URL("v1/chat/completions", via.worker.url).href;
      return this.#checked(await postChatStream(url, this.#headers("bench-stream"), text));
    }
    this.counts.otherModelCalls++;
    const url = via === "floor"
      ? this.floor.url
      : via === "object"
      ? new URL("stream-object", this.floor.url).href
      : `${this.fake.url}/chat/completions`;
    return this.#checked(await postChatStream(url, { "content-type": "application/json" }, text));
  }

  /**
   * One Telegram update to `target` (a baton, the peer or the floor Worker's chat route), timed to
   * its ack and to its reply. Its `update_id` comes from the fake Telegram's one sequence for the
   * run; its chat is the phase's own (telegram 1,000,000+ per baton, 8,000,000+ for the floor and
   * 9,000,000+ for the peer, live 7,000,000+, memory 7,100,000+, access 7,200,000+, runtime
   * floor 8,500,000+), so no phase finds another's session history.
   */
  async telegramUpdate(
    target: Baton | "peer" | "floor",
    update: { chatId: number; messageId: number; text: string; photo?: string },
  ): Promise<TelegramSample> {
    if (target === "peer" || target === "floor") this.counts.otherModelCalls++;
    else this.counts.batonTurns++;
    const url = target === "peer"
      ? this.peer.url
      : target === "floor"
      ? new URL("telegram", this.floor.url).href
      : new URL("webhooks/telegram", target.worker.url).href;
    return this.#checked(await sendTelegramUpdate(url, this.telegram, update));
  }

  /** A session's transcript (current conversation) on `baton`. */
  async transcript(baton: Baton, session: string): Promise<{ role: string; content: string }[]> {
    const res = await baton.worker.fetch(`/v1/sessions/api:${session}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    const body = await res.json() as { messages?: { role: string; content: string }[] };
    return body.messages ?? [];
  }

  /**
   * Runs `fn` on a fresh copy of `baton` (with `vars` over the usual ones) in a workerd of its own (one warm-up turn first):
   * workerd keeps every session object it created in memory, and past about 2,000 of them new
   * ones fail with SQLITE_NOMEM. Returns once Miniflare's fire-and-forget removal of the temp dir
   * is done: deleting thousands of SQLite files on this process's event loop slows every request
   * for seconds.
   */
  async onFresh<T>(
    baton: Baton,
    fn: (fresh: Baton) => Promise<T>,
    vars: Record<string, string> = {},
    /** `media`: bind the `MEDIA` R2 bucket (chat media need it). */
    opts: { media?: boolean } = {},
  ): Promise<T> {
    const worker = await startBundled(baton.scriptPath, {
      vars: { ..._batonVars(this.fake, this.telegram), ...vars },
      durableObjects: _BATON_OBJECTS,
      media: opts.media,
    });
    let tmpDir: string | undefined;
    try {
      const fresh = { ...baton, worker };
      await this.turn(fresh, "bench-warm-up", "warm-up");
      tmpDir = await miniflareTmpDir(worker.pids);
      return await fn(fresh);
    } finally {
      await worker.dispose();
      const t0 = performance.now();
      while (tmpDir && await Deno.stat(tmpDir).then(() => true, () => false)) {
        if (performance.now() - t0 > 60_000) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      console.error(
        `  (workerd stopped, temp dir removed in ${r1((performance.now() - t0) / 1000)} s)`,
      );
    }
  }

  /** Stops every Worker and fake, last started first. */
  close(): Promise<void> {
    return Rig.#closeAll(this.#closers);
  }

  static async #closeAll(closers: (() => Promise<void>)[]): Promise<void> {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((e) => console.error(`  (close failed: ${e})`));
    }
  }

  #headers(session: string): Record<string, string> {
    return {
      authorization: `Bearer ${API_KEY}`,
      "content-type": "application/json",
      "x-session-id": session,
    };
  }

  #checked<T extends { error?: string }>(sample: T): T {
    if (sample.error) this.#report.fail(sample.error);
    return sample;
  }
}
