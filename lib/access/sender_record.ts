// One sender's access record (paired or not, their pending pairing code, notices sent, turns in the quota window), kept in the sender's own object; runtime-neutral.
import type { RecordStorage } from "./record_storage.ts";
import type { Refusal } from "./access_policy.ts";
import {
  BUDGET_NOTICE_AT,
  dropReservation,
  reserveTokens,
  type TokenReservation,
} from "./token_budget.ts";
import type { NoticeKind } from "./notice_outbox.ts";

/** How long a pairing code is valid, and the least time between two code messages to one sender. */
export const PAIRING_CODE_MS = 60 * 60 * 1000;
/** The least time between two "this bot is private" notices to one sender. */
export const PRIVATE_NOTICE_MS = 24 * 60 * 60 * 1000;
/** The least time between two over-quota notices to one sender. */
export const QUOTA_NOTICE_MS = 60 * 60 * 1000;
/**
 * The least time between two access notices (over quota, private) in one group chat, whoever they
 * are for: a busy group hears one per period, not one per member.
 */
export const GROUP_NOTICE_MS = 10 * 60 * 1000;

/** Unambiguous characters only: no 0/O, 1/I/L. */
const _CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
const _CODE_LENGTH = 8;

/** What the Worker asks of a sender's record for one message. */
export interface AdmitRequest {
  /** Unlisted by the settings: the sender must have been paired. */
  needsPairing: boolean;
  /** What an unpaired sender gets. */
  refusal: Refusal;
  /** Display name, kept with a pending code for the owner's list. */
  name: string;
  /** A turn-quota window, or null when this message does not count (a command, no quota, an admin). */
  quota: { limit: number; windowMs: number } | null;
  /** The message's delivery id: a redelivery is counted once. */
  deliveryKey: string;
  /**
   * A daily token budget the turn reserves from (lib/access/token_budget.ts), keyed by
   * `deliveryKey`; absent or null: none applies.
   */
  tokens?: Omit<TokenReservation, "key"> | null;
  now: number;
}

/** A pairing code waiting for the owner. */
export interface PendingPairing {
  code: string;
  name: string;
  /** When this request for access was first made (ms). */
  firstAt: number;
  expiresAt: number;
}

/** The record's answer. `notify`: send the notice now (the record counted it as sent). */
export type AdmitResult =
  | { kind: "admitted" }
  | { kind: "over_quota"; notify: boolean; retryAfterMs: number }
  /** Over the daily token budget (`tokens`) until `resetAt`; nothing was counted or reserved. */
  | { kind: "over_budget"; notify: boolean; resetAt: number }
  | { kind: "refused"; refusal: Refusal; notify: boolean; pairing?: PendingPairing };

interface _Approval {
  at: number;
  by: string;
}

interface _Counted {
  key: string;
  at: number;
}

/**
 * Decides one message against the record, in one synchronous step (the object serialises them,
 * so 50 messages at once count exactly): pairing first, then the quota. A refused or over-quota
 * message is not counted. Notices are throttled here, where the throttle is consistent.
 */
export function admitToRecord(storage: RecordStorage, request: AdmitRequest): AdmitResult {
  const { now } = request;
  if (request.needsPairing && !storage.get<_Approval>("approved")) {
    return _refuse(storage, request);
  }
  if (!request.quota) return _reserve(storage, request);
  const { limit, windowMs } = request.quota;
  const counted = (storage.get<_Counted[]>("turns") ?? []).filter((t) => now - t.at < windowMs);
  if (counted.some((t) => t.key === request.deliveryKey)) return _reserve(storage, request);
  if (counted.length >= limit) {
    storage.put("turns", counted);
    return {
      kind: "over_quota",
      notify: _noticeDue(storage, "quota_notice_at", QUOTA_NOTICE_MS, now),
      retryAfterMs: Math.max(1, counted[0].at + windowMs - now),
    };
  }
  // Over its token budget, the turn is not counted in the quota either.
  const budget = _reserve(storage, request);
  if (budget.kind !== "admitted") return budget;
  counted.push({ key: request.deliveryKey, at: now });
  storage.put("turns", counted);
  return { kind: "admitted" };
}

/**
 * Takes back the turn `admitToRecord` counted for `deliveryKey`: the request was refused before
 * its turn started. True when it was counted. Only for a key the one request made for itself: a
 * client's key may also name an earlier turn.
 */
export function uncountTurn(storage: RecordStorage, deliveryKey: string): boolean {
  const released = dropReservation(storage, deliveryKey); // its token reservation too
  const counted = storage.get<_Counted[]>("turns") ?? [];
  const kept = counted.filter((t) => t.key !== deliveryKey);
  if (kept.length === counted.length) return released;
  storage.put("turns", kept);
  return true;
}

/**
 * A group chat's notice throttle (its `notice:<session key>` record): whether an access notice may
 * go to the chat now; if so it is counted as sent (`noticeFailed(…, "group")` takes it back).
 */
export function groupNoticeDue(storage: RecordStorage, now: number): boolean {
  return _noticeDue(storage, "group_notice_at", GROUP_NOTICE_MS, now);
}

/**
 * A notice `admitToRecord` (or `groupNoticeDue`) counted as sent was not sent: the next message
 * may try again.
 */
export function noticeFailed(storage: RecordStorage, kind: NoticeKind): void {
  storage.delete(_NOTICE_AT[kind]);
}

const _NOTICE_AT = {
  refusal: "refusal_notice_at",
  quota: "quota_notice_at",
  group: "group_notice_at",
  budget: BUDGET_NOTICE_AT,
} as const;

/** Marks the sender paired (idempotent); their pending code and refusal notices are done with. */
export function approveRecord(storage: RecordStorage, by: string, now: number): void {
  if (!storage.get<_Approval>("approved")) storage.put<_Approval>("approved", { at: now, by });
  storage.delete("pending");
  storage.delete("refusal_notice_at");
}

/** Whether the sender is paired now (read only: a scheduled job asks before it runs for them). */
export function isPaired(storage: RecordStorage): boolean {
  return storage.get<_Approval>("approved") !== undefined;
}

/** Revokes a pairing; true when the sender had been paired. Their next direct message gets a new code. */
export function revokeRecord(storage: RecordStorage): boolean {
  const was = storage.get<_Approval>("approved") !== undefined;
  storage.delete("approved");
  storage.delete("pending");
  storage.delete("refusal_notice_at");
  return was;
}

/** A fresh pairing code: 8 characters of an unambiguous alphabet, from the platform's CSPRNG. */
export function newPairingCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(_CODE_LENGTH));
  // 256 is not a multiple of 31: reject the top values so every character is equally likely.
  let code = "";
  for (const b of bytes) {
    if (b >= 248) return newPairingCode();
    code += _CODE_ALPHABET[b % _CODE_ALPHABET.length];
  }
  return code;
}

/** A code as a person typed it (any case, spaces or dashes), or null when it cannot be one. */
export function normalizePairingCode(text: string): string | null {
  const code = text.replace(/[\s-]/g, "").toUpperCase();
  return code.length === _CODE_LENGTH && [...code].every((ch) => _CODE_ALPHABET.includes(ch))
    ? code
    : null;
}

function _refuse(storage: RecordStorage, request: AdmitRequest): AdmitResult {
  const { now, refusal } = request;
  if (refusal === "silence") return { kind: "refused", refusal, notify: false };
  if (refusal !== "pairing") {
    const window = refusal === "private" ? PRIVATE_NOTICE_MS : Number.POSITIVE_INFINITY;
    return {
      kind: "refused",
      refusal,
      notify: _noticeDue(storage, "refusal_notice_at", window, now),
    };
  }
  let pending = storage.get<PendingPairing>("pending");
  if (!pending || pending.expiresAt <= now) {
    pending = {
      code: newPairingCode(),
      name: request.name,
      firstAt: pending?.firstAt ?? now,
      expiresAt: now + PAIRING_CODE_MS,
    };
    storage.put("pending", pending);
  }
  return {
    kind: "refused",
    refusal,
    notify: _noticeDue(storage, "refusal_notice_at", PAIRING_CODE_MS, now),
    pairing: pending,
  };
}

// The turn's reservation from the record's daily token budget, when one applies.
function _reserve(storage: RecordStorage, request: AdmitRequest): AdmitResult {
  if (!request.tokens) return { kind: "admitted" };
  return reserveTokens(storage, { ...request.tokens, key: request.deliveryKey }, request.now);
}

// Whether a notice of this kind is due; if so it is counted as sent now.
function _noticeDue(storage: RecordStorage, key: string, windowMs: number, now: number): boolean {
  const last = storage.get<number>(key);
  if (last !== undefined && now - last < windowMs) return false;
  storage.put(key, now);
  return true;
}
