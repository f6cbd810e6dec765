// The replay horizon: how old a signed event (by its own timestamp) may be and still start anything, for platforms that sign no delivery time, and how long their delivery keys are remembered; runtime-neutral.
import { log } from "../runtime/mod.ts";
import { DEDUP_MS } from "../session/inbox.ts";

/**
 * Room between the horizon and the inbox's memory of delivery keys, for a platform clock ahead of
 * baton's and for a first delivery that reached the inbox after its event's time.
 */
const _CLOCK_ROOM_MS = 60 * 60 * 1000;

/**
 * The oldest a signed event may be and still run without a longer memory of its key: an hour
 * short of how long the inbox remembers a delivery key (`DEDUP_MS`). LINE, WhatsApp and GitHub
 * sign the body alone, so a captured delivery verifies for ever, and the inbox forgets its key
 * after a day: an event older than that could run twice. Inside the horizon, an event seen before
 * is still remembered and answered as a duplicate; past it, it is refused. A platform that retries
 * for longer takes its own horizon and remembers its keys `keyMemoryFor(horizon)`.
 */
export const REPLAY_HORIZON_MS = DEDUP_MS - _CLOCK_ROOM_MS;

/**
 * How long a platform's delivery keys must be remembered (`PlatformMessage.keyMemoryMs`) for its
 * events to be refused past `horizonMs` and deduplicated inside it: the horizon counts from the
 * event's own time, the memory from its first delivery, which a platform clock ahead of baton's
 * puts up to the clock room earlier.
 */
export function keyMemoryFor(horizonMs: number): number {
  return horizonMs + _CLOCK_ROOM_MS;
}

/**
 * How long a delivery key is remembered for a platform that signs no time at all (Twilio): its
 * signature never ages, so any bound is a choice. A month, keys and times only (tens of bytes a
 * message): a captured delivery replayed within it is a duplicate; after it, it would run again.
 */
export const UNDATED_KEY_MEMORY_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Whether an event stamped `eventMs` (its own signed time, ms since the epoch) is older than
 * `horizonMs` at `nowSeconds`; logs the refusal (platform, event id, age) when it is. An event
 * stamped ahead of baton's clock is not old. No stamp (not a number): not judged here, as the
 * platform always sends one and the body is signed.
 */
export function olderThanHorizon(
  platform: string,
  event: { id: string; eventMs: number | undefined },
  nowSeconds: number,
  horizonMs: number,
): boolean {
  const { id, eventMs } = event;
  if (eventMs === undefined || !Number.isFinite(eventMs)) return false;
  const ageMs = nowSeconds * 1000 - eventMs;
  if (ageMs <= horizonMs) return false;
  log.warn(`${platform}: an event older than the replay horizon was refused (no turn)`, {
    event_id: id.slice(0, 80),
    age_s: Math.floor(ageMs / 1000),
    horizon_s: Math.floor(horizonMs / 1000),
  });
  return true;
}
