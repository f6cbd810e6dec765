// Steering a running turn: a message offered to it, taken between its steps under its claim, or left queued as a turn of its own; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import type { Claim } from "./claim.ts";
import { num, type Tx } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { InboundMessage } from "./types.ts";

/**
 * What the model reads before a steered message's text: a user message that arrived while the
 * turn worked, not the question the turn started on.
 */
export const STEER_MARK = "[The user sent this while you were working on your reply:]\n";

/** The user message a steered `message` becomes in the turn that takes it (its media kept with it). */
export function steerChatMessage(message: InboundMessage): ChatMessage {
  const media = message.media?.length ? { media: [...message.media] } : {};
  return { role: "user", content: STEER_MARK + message.text, ...media } as ChatMessage;
}

/**
 * Offers queued message `seq` to turn `target` (running, paused or still queued): that turn takes
 * it at its next step; a turn that ends first leaves it queued, an ordinary message. A turn paused
 * on an approval takes nothing while it waits for the human (no executor runs, and the session's
 * claim keeps any other turn from starting): the steer stays queued, offered, and the resumed turn
 * takes it at its next model step, after the answered call's result. So the one rule — taken at a
 * next step, else its own turn — holds for a paused turn too, and a restart during the pause
 * changes nothing (the offer is a column of the queued row).
 */
export function offerSteer(stores: SessionStores, tx: Tx, seq: number, target: number): void {
  stores.db.exec(tx, `UPDATE inbox SET steer_of = ? WHERE seq = ?`, target, seq);
  // Set before the commit, by the object that takes steers: a rolled-back offer costs one look.
  _slot(stores).mayHave = true;
}

/**
 * Per storage: whether a steer may wait to be taken (offered, or taken by an attempt that may be
 * re-run), so that the steps of a turn nobody steered run no statement. Only `offerSteer` makes a
 * steer, in this object; an instance's first look reads (a predecessor may have stored one).
 */
const _mayHave = new WeakMap<object, { mayHave: boolean }>();
/** The stores that looked once already: a new store (a restart) looks again. */
const _looked = new WeakSet<SessionStores>();

function _slot(stores: SessionStores): { mayHave: boolean } {
  const key = stores.db.storageIdentity;
  let slot = _mayHave.get(key);
  if (!slot) _mayHave.set(key, slot = { mayHave: true });
  if (!_looked.has(stores)) {
    _looked.add(stores);
    slot.mayHave = true;
  }
  return slot;
}

/** Whether run `seq` may still be steered: its turn has not started, or runs, or waits. */
export function steerable(stores: SessionStores, seq: number): boolean {
  const status = stores.inbox.get(seq)?.status;
  return status === "queued" || status === "running" || status === "waiting";
}

/**
 * Takes the messages offered to `claim`'s turn, in one write under its claim (`steered`, joined to
 * the turn by `merged_into`, so they get no turn of their own), and records `run.steered` on the
 * turn's run for each message this attempt is given. Returns the messages taken by this turn, in
 * arrival order, that this attempt has not been given yet (`given`, by seq, updated): a turn that
 * died after taking one is re-run with it. While nothing was offered (`_slot`) it runs no statement.
 */
export function takeSteers(
  stores: SessionStores,
  claim: Claim,
  given: Set<number>,
): ChatMessage[] {
  const { db, claims, inbox, events } = stores;
  const slot = _slot(stores);
  if (!slot.mayHave) return [];
  return db.transaction((tx) => {
    if (!claims.holds(claim)) return [];
    db.exec(
      tx,
      `UPDATE inbox SET status = 'steered', merged_into = ? WHERE status = 'queued' AND steer_of = ?`,
      claim.seq,
      claim.seq,
    );
    const seqs = db.rows(
      `SELECT seq FROM inbox WHERE status = 'steered' AND merged_into = ? ORDER BY seq`,
      claim.seq,
    ).map((row) => num(row, "seq"));
    // None offered and none taken (which a re-run attempt is given again): nothing to look for
    // until the next offer. Cleared before the commit; one that rolls back leaves nothing to take.
    if (!seqs.length) slot.mayHave = false;
    const taken: ChatMessage[] = [];
    for (const seq of seqs) {
      if (given.has(seq)) continue;
      given.add(seq);
      const message = inbox.message(seq);
      // One that cannot be read back is still taken (never a turn of its own): it says nothing.
      if (!message) continue;
      taken.push(steerChatMessage(message));
      events.emit(tx, claim.seq, "run.steered", { steer_seq: seq });
    }
    return taken;
  });
}

/**
 * The seqs of the steered messages whose text `messages` (a paused turn's) already holds: a turn
 * resumed after its approval is not given them twice.
 */
export function steersIn(stores: SessionStores, seq: number, messages: ChatMessage[]): Set<number> {
  const texts = messages.flatMap((m) =>
    m.role === "user" && typeof m.content === "string" && m.content.startsWith(STEER_MARK)
      ? [m.content]
      : []
  );
  const given = new Set<number>();
  for (const steered of _steered(stores, seq)) {
    const message = stores.inbox.message(steered);
    const at = message ? texts.indexOf(STEER_MARK + message.text) : -1;
    if (at < 0) continue;
    texts.splice(at, 1);
    given.add(steered);
  }
  return given;
}

function _steered(stores: SessionStores, seq: number): number[] {
  return stores.db.rows(
    `SELECT seq FROM inbox WHERE status = 'steered' AND merged_into = ? ORDER BY seq`,
    seq,
  ).map((row) => num(row, "seq"));
}

/** The text of a `/steer TEXT` chat message as typed (case kept), or "" when it has none. */
export function steerArgument(text: string): string {
  const match = /^\s*\/steer(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/i.exec(text);
  return (match?.[1] ?? "").trim();
}
