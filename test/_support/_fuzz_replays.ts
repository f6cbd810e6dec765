// The fuzzer's replay dimension: a signed delivery sent again — the same bytes, re-signed under a fresh delivery id, or as the platform redelivers it — runs one turn; Deno.
import fc from "fast-check";
import { deliver, type Delivery, type Driver, DRIVERS } from "./drivers/mod.ts";
import type { FakeModel } from "../../lib/testing/fake_model.ts";
import type { FakePlatform } from "./fake_platform.ts";
import type { TestWorker } from "./worker.ts";

/**
 * How one copy of a delivery is sent again: the captured request as it was (a replay by whoever
 * saw it), re-signed now under a fresh delivery id (what a replay of a scheme whose delivery id is
 * unsigned looks like, and what a platform's retry with a new id looks like), or as the platform
 * itself redelivers it.
 */
export type ReplayCopy = "same" | "fresh" | "redelivery";

/** One replay case: how each copy is sent, and whether the copies race the original. */
export interface ReplayCase {
  copies: ReplayCopy[];
  concurrent: boolean;
}

/** Replay cases: one to three copies, sent after the original or at the same time. */
export const replayCaseArb: fc.Arbitrary<ReplayCase> = fc.record({
  copies: fc.array(fc.constantFrom<ReplayCopy>("same", "fresh", "redelivery"), {
    minLength: 1,
    maxLength: 3,
  }),
  concurrent: fc.boolean(),
});

/**
 * The platforms a replay is a threat on: every driver but the generic webhook, whose delivery id
 * is signed and chosen by the sender (a fresh id is a new message by the scheme's definition).
 */
export const REPLAY_DRIVERS: readonly Driver[] = DRIVERS.filter((d) => d.name !== "generic");

/** `REPLAY-<n>.`: the marker a replay case's message carries (apart from the FUZZ- markers). */
export const REPLAY_MARKER = /REPLAY-([0-9]+)\./g;

/** A copy of `delivery` as `copy` says. */
async function _copy(driver: Driver, delivery: Delivery, copy: ReplayCopy): Promise<Delivery> {
  if (copy === "same") return delivery;
  if (copy === "redelivery") return await driver.redeliver(delivery);
  const headers = await driver.sign(delivery.body, driver.credentials, {
    id: crypto.randomUUID(),
  });
  return { ...delivery, headers };
}

/**
 * Sends `runs` replay cases to `driver`'s webhook, each a fresh message in a fresh chat carrying
 * its own marker; returns the markers sent. Every answer must be 2xx (a replay is acknowledged,
 * so the platform stops retrying); what ran is checked afterwards by {@link replayVerdicts}.
 */
export async function fuzzReplays(
  worker: TestWorker,
  driver: Driver,
  seed: number,
  runs: number,
  nextMarker: () => string,
): Promise<string[]> {
  const markers: string[] = [];
  const fetchPath = (path: string, init: RequestInit) => worker.fetch(path, init);
  await fc.assert(
    fc.asyncProperty(replayCaseArb, async (c) => {
      const marker = nextMarker();
      markers.push(marker);
      const original = await driver.message({ chat: driver.newChat(), text: `hi ${marker}` });
      const copies = await Promise.all(c.copies.map((copy) => _copy(driver, original, copy)));
      const send = async (d: Delivery, what: string) => {
        const res = await deliver(fetchPath, driver, d);
        const text = await res.text();
        if (res.status < 200 || res.status >= 300) {
          throw new Error(`${driver.name}: ${what} of ${marker} answered ${res.status} ${text}`);
        }
      };
      if (c.concurrent) {
        await Promise.all([
          send(original, "the original"),
          ...copies.map((d, i) => send(d, `copy ${i} (${c.copies[i]})`)),
        ]);
      } else {
        await send(original, "the original");
        for (const [i, d] of copies.entries()) await send(d, `copy ${i} (${c.copies[i]})`);
      }
    }),
    { numRuns: runs, seed },
  );
  return markers;
}

/**
 * Each marker's turns (model requests whose newest user message carries it) and replies (what `driver` reads of the fake
 * platform's calls carrying it): a message sent with its copies must have run exactly once and
 * been answered exactly once. Returns one line per marker that did not.
 */
export function replayVerdicts(
  driver: Driver,
  markers: string[],
  fake: FakeModel,
  platform: FakePlatform,
): string[] {
  const turns = new Map<string, number>();
  // By the last user message: a later message in the same chat carries the marker in its history.
  for (const req of fake.requests) {
    for (const m of new Set(req.lastUserText.match(REPLAY_MARKER) ?? [])) {
      turns.set(m, (turns.get(m) ?? 0) + 1);
    }
  }
  const replies = new Map<string, number>();
  for (const call of platform.calls) {
    const sent = driver.sent(call);
    if (!sent) continue;
    for (const m of new Set(sent.text.match(REPLAY_MARKER) ?? [])) {
      replies.set(m, (replies.get(m) ?? 0) + 1);
    }
  }
  return markers.flatMap((m) => {
    const t = turns.get(m) ?? 0;
    const r = replies.get(m) ?? 0;
    return t === 1 && r === 1 ? [] : [`${driver.name} ${m}: ${t} turns, ${r} replies`];
  });
}
