// A daily token budget kept in one access record (a chat sender's, an API tenant's): reservations taken before a turn's model call, settled with the turn's real usage, summed per UTC day; runtime-neutral.
import type { UsageFigures } from "../chat/usage_text.ts";
import type { RecordStorage } from "./record_storage.ts";
import { utcDay } from "../session/session_usage.ts";

/** The least time between two over-budget notices to one record: one per budget period (a day). */
export const BUDGET_NOTICE_MS = 24 * 60 * 60 * 1000;

const _DAY_MS = 24 * 60 * 60 * 1000;
/** `usage:<day>`: what the record's turns used on that UTC day. */
const _USAGE = "usage:";
/** Reservations not settled yet, by key: each counts against the day it was taken on. */
const _HELD = "budget_held";
/** Where an older version kept the keys of the latest turns settled (now in each day's row). */
const _SETTLED = "budget_settled";
/** How many settled keys a day's row remembers (a retry follows its first try within seconds). */
const _SETTLED_KEEP = 100;
/** How long after midnight a settlement also looks for its key in yesterday's row. */
const _LOOK_BACK_MS = 60 * 60 * 1000;
/** When the last over-budget notice was counted as sent. */
export const BUDGET_NOTICE_AT = "budget_notice_at";
/** Days of usage a record keeps; older days are dropped as new ones are written. */
const _KEEP_DAYS = 62;

/** Token counts of one model call or one turn; `cached_tokens` are part of `prompt_tokens`. */
export interface TokenCounts {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  /** What the calls cost at `MODEL_PRICES` (absent: unpriced). */
  cost?: number;
}

/**
 * What a record's turns used on one UTC day (`day`: `YYYY-MM-DD`; `cost` at `MODEL_PRICES`, 0 when
 * unpriced; `turns` settled that day), and the tokens reserved for turns not settled yet
 * (running, queued, or lost before they settled).
 */
export interface DayUsage extends UsageFigures {
  reserved_tokens: number;
}

/** A turn's claim on the day's budget, asked before its message is stored. */
export interface TokenReservation {
  /** Tokens per UTC day the record may use (`USER_TOKENS_PER_DAY`, `TENANT_TOKENS_PER_DAY`). */
  limit: number;
  /** Tokens set aside for the turn until it settles (`TURN_MAX_TOKENS`, else a default). */
  estimate: number;
  /** Names the turn: a redelivery reserves once, and its settlement finds it. */
  key: string;
}

/** The answer: admitted (reserved), or over the budget until `resetAt` (the next UTC midnight). */
export type BudgetVerdict =
  | { kind: "admitted" }
  | { kind: "over_budget"; notify: boolean; resetAt: number };

interface _Held {
  tokens: number;
  day: string;
}

/**
 * `usage:<day>`: the day's sums, and the keys of the latest turns summed into it (`settled`, at
 * most `_SETTLED_KEEP`: a settlement retried after it landed counts nothing). Kept in the row the
 * turn is written to, so a settlement is one row written, not two.
 */
interface _Row {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost?: number;
  turns: number;
  settled?: string[];
}

export { utcDay };

/** The start of the UTC day after `now` (ms): when a daily budget resets. */
export function nextUtcMidnight(now: number): number {
  return (Math.floor(now / _DAY_MS) + 1) * _DAY_MS;
}

/**
 * Whether the turn named `reservation.key` fits today's budget: today's settled usage, plus every
 * reservation not settled yet, plus this one's estimate, stays within `limit`. If so its estimate
 * is reserved now, in the same synchronous step (the object serialises its calls, so 50 messages
 * at once reserve one after another and never together pass the limit). A key reserved before is
 * admitted again without a second reservation. `dryRun`: answer without reserving (a caller that
 * must ask another limit first).
 */
export function reserveTokens(
  storage: RecordStorage,
  reservation: TokenReservation,
  now: number,
  dryRun = false,
): BudgetVerdict {
  const day = utcDay(now);
  const held = _held(storage, day);
  if (Object.hasOwn(held, reservation.key)) return { kind: "admitted" };
  const used = _usage(storage, day);
  const reserved = Object.values(held).reduce((sum, h) => sum + h.tokens, 0);
  if (used.total_tokens + reserved + reservation.estimate > reservation.limit) {
    const last = storage.get<number>(BUDGET_NOTICE_AT);
    // One notice per budget day: the day the last one went out in, not a sliding window.
    const notify = last === undefined || utcDay(last) !== day;
    if (notify) storage.put(BUDGET_NOTICE_AT, now);
    return { kind: "over_budget", notify, resetAt: nextUtcMidnight(now) };
  }
  if (dryRun) return { kind: "admitted" };
  held[reservation.key] = { tokens: reservation.estimate, day };
  storage.put(_HELD, held);
  return { kind: "admitted" };
}

/**
 * Settles turn `key`: a reservation it took is replaced by what it really used, added to the day
 * it was reserved on; a turn that reserved nothing (no cap applies: the record's usage is summed
 * all the same) is added to today, when it used any tokens. True when this counted it; a second
 * settlement (a retried call) changes nothing, so a turn is summed once: the day's row keeps the
 * keys it summed, and in the first hour of a day yesterday's are looked at too (a retry follows
 * its first try within seconds, maybe across midnight). `reserved: false`: the caller knows the
 * turn took no reservation (no cap was set), so none is read. One read and one write of the day's
 * row; a reservation adds one of each.
 */
export function settleTokens(
  storage: RecordStorage,
  key: string,
  used: TokenCounts,
  now: number,
  reserved?: boolean,
): boolean {
  const any = _count(used.prompt_tokens) + _count(used.completion_tokens) > 0;
  if (!any && reserved === false) return false;
  const held = reserved === false ? {} : storage.get<Record<string, _Held>>(_HELD) ?? {};
  const entry = held[key];
  if (!entry && !any) return false;
  if (entry) {
    delete held[key];
    storage.put(_HELD, held);
  }
  // Nothing used (a `/steer` taken into a running turn): the reservation is freed, no turn counted.
  if (!any) return true;
  const today = utcDay(now);
  const day = entry?.day ?? today;
  const row = storage.get<_Row>(`${_USAGE}${day}`);
  const { keys, legacy } = _settledKeys(storage, row);
  if (keys.includes(key)) return false; // freed above, if a redelivery had reserved it again
  if (!entry && now - Date.parse(today) < _LOOK_BACK_MS) {
    const yesterday = storage.get<_Row>(`${_USAGE}${utcDay(now - _DAY_MS)}`);
    if (yesterday?.settled?.includes(key)) return false;
  }
  _addTokens(storage, day, row, [...keys.slice(1 - _SETTLED_KEEP), key], used);
  if (legacy) storage.delete(_SETTLED); // carried into the row just written
  // The day past retention, dropped on today's first turn: a delete is a row written, billed.
  if (day === today && row === undefined) {
    storage.delete(`${_USAGE}${utcDay(now - _KEEP_DAYS * _DAY_MS)}`);
  }
  return true;
}

/** Drops the reservation `key` took, uncounted (its request was refused before its turn). */
export function dropReservation(storage: RecordStorage, key: string): boolean {
  const held = storage.get<Record<string, _Held>>(_HELD) ?? {};
  if (!held[key]) return false;
  delete held[key];
  storage.put(_HELD, held);
  return true;
}

/**
 * The keys a day's row says it summed. A row without them was written by an older version, which
 * kept the latest keys in a list of their own (`budget_settled`): that list is read instead, to
 * be carried into the row written next and then dropped (`legacy`), so a retried settlement of a
 * turn settled before a deploy still counts nothing. A day's first turn reads it (absent) once.
 */
function _settledKeys(
  storage: RecordStorage,
  row: _Row | undefined,
): { keys: string[]; legacy: boolean } {
  if (row?.settled) return { keys: row.settled, legacy: false };
  const legacy = storage.get<string[]>(_SETTLED);
  return { keys: legacy ?? [], legacy: legacy !== undefined };
}

/** Adds one settled turn's counts to `day`'s row (`row`: as read), with the keys it has summed. */
function _addTokens(
  storage: RecordStorage,
  day: string,
  row: _Row | undefined,
  settled: string[],
  used: TokenCounts,
) {
  const sum = _sums(row);
  const next: _Row = {
    prompt_tokens: sum.prompt_tokens + _count(used.prompt_tokens),
    completion_tokens: sum.completion_tokens + _count(used.completion_tokens),
    cached_tokens: sum.cached_tokens + _count(used.cached_tokens),
    cost: sum.cost + _money(used.cost),
    turns: sum.turns + 1,
    settled,
  };
  storage.put(`${_USAGE}${day}`, next);
}

/** What the record's turns used on `day` (`YYYY-MM-DD`), reservations not settled included. */
export function dayUsage(storage: RecordStorage, day: string): DayUsage {
  const used = _usage(storage, day);
  const held = storage.get<Record<string, _Held>>(_HELD) ?? {};
  const reserved = Object.values(held).filter((h) => h.day === day)
    .reduce((sum, h) => sum + h.tokens, 0);
  return { day, ...used, reserved_tokens: reserved };
}

/** The settled usage of `day`, zeros when none. */
function _usage(storage: RecordStorage, day: string): Omit<DayUsage, "day" | "reserved_tokens"> {
  return _sums(storage.get<_Row>(`${_USAGE}${day}`));
}

/** A day's row as usage figures, zeros when none. */
function _sums(row: _Row | undefined): Omit<DayUsage, "day" | "reserved_tokens"> {
  const prompt = row?.prompt_tokens ?? 0;
  const completion = row?.completion_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: row?.cached_tokens ?? 0,
    total_tokens: prompt + completion,
    cost: row?.cost ?? 0,
    turns: row?.turns ?? 0,
  };
}

/** Today's reservations; those of earlier days are dropped (a turn lost before it settled). */
function _held(storage: RecordStorage, day: string): Record<string, _Held> {
  const held = storage.get<Record<string, _Held>>(_HELD) ?? {};
  const today = Object.fromEntries(Object.entries(held).filter(([, h]) => h.day === day));
  if (Object.keys(today).length !== Object.keys(held).length) storage.put(_HELD, today);
  return today;
}

function _money(n: number | undefined): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

function _count(n: number | undefined): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** To a chat user over `USER_TOKENS_PER_DAY`: once per day; the message was not queued. */
export function budgetText(limit: number, resetAt: number, now: number): string {
  const hours = Math.max(1, Math.ceil((resetAt - now) / 3_600_000));
  return `You have reached today's limit of ${limit.toLocaleString("en-US")} tokens, so this ` +
    `message was not answered. The limit resets at midnight UTC (in about ${hours} hour` +
    `${hours === 1 ? "" : "s"}).`;
}
