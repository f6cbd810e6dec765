// The one per-entry frame (a turn's context fields, its jobs, its log fields) bound with one AsyncLocalStorage; any runtime with node:async_hooks (workerd: nodejs_compat).
import { AsyncLocalStorage } from "node:async_hooks";

/** The string fields of a turn's context. */
export const CONTEXT_FIELDS = [
  "platform",
  "chat_id",
  "chat_name",
  "thread_id",
  "user_id",
  "user_name",
  "session_key",
  "message_id",
  // Set for a scheduled job's turn: which job (its delivery target is the chat fields above).
  "job_id",
] as const;

/** Name of one string field of the turn context. */
export type ContextField = typeof CONTEXT_FIELDS[number];

/** Values bound for a turn: every field optional; a field left out is "never set". */
export type ContextFields = Partial<Record<ContextField, string>> & { async_delivery?: boolean };

/** Configured fallbacks for fields that were never bound (from the deployment's env). */
export type ContextDefaults = Partial<Record<ContextField, string>>;

/** The context as a turn sees it: every field resolved (bound, else default, else ""). */
export type SessionContext = Readonly<Record<ContextField, string> & { async_delivery: boolean }>;

/** Extra fields of every log line written inside a frame (lib/runtime/log.ts). */
export type FrameLogFields = Readonly<Record<string, unknown>>;

/**
 * What a turn binds once, as it starts (lib/session/turn_trace.ts `traced`): its message's
 * context, the jobs its tools may use, and the fields its log lines carry.
 */
export interface TurnFrame {
  /** The turn's message's context: replaces the enclosing frame's fields (its defaults stay). */
  context: Omit<ContextFields, "async_delivery">;
  /**
   * The session's jobs as this turn may use them (lib/session/turn_jobs.ts `TurnJobs`, read
   * back by `currentTurnJobs`): typed loosely here so that this module imports nothing of the
   * session's, which imports it.
   */
  jobs?: object;
  /** Added to the enclosing frame's log fields (a turn's `seq`). */
  log?: Record<string, unknown>;
}

/**
 * One frame per entry point, one store: the context fields bound (a field left out is "never
 * set", one bound to "" is explicitly cleared), the configured defaults, the log fields and the
 * running turn's jobs. Separate stores for each would be bound one after the other at every
 * entry, and could disagree about whose turn it is.
 */
interface _Frame {
  readonly bound: Readonly<ContextFields>;
  readonly defaults: Readonly<ContextDefaults>;
  readonly log: FrameLogFields;
  readonly jobs: object | null;
}

const _EMPTY: _Frame = Object.freeze({
  bound: Object.freeze({}),
  defaults: Object.freeze({}),
  log: Object.freeze({}),
  jobs: null,
});

const _storage = new AsyncLocalStorage<_Frame>();

/** The context fields of `fields` that are set (even to ""), copied and frozen. */
function _bound(fields: ContextFields): Readonly<ContextFields> {
  const bound: ContextFields = {};
  for (const name of CONTEXT_FIELDS) {
    const value = fields[name];
    if (value !== undefined) bound[name] = String(value);
  }
  if (fields.async_delivery !== undefined) bound.async_delivery = fields.async_delivery;
  return Object.freeze(bound);
}

/**
 * Runs `fn` in a new frame: an entry point (a Worker request, a Durable Object's RPC or alarm)
 * binds `fields` as the current context and `defaults` as the fallback for fields left unbound.
 * Frames do not nest: the new frame replaces the outer one entirely (its log fields and jobs too).
 */
export function withSessionContext<T>(
  fields: ContextFields,
  defaults: ContextDefaults,
  fn: () => T,
): T {
  return _storage.run(
    { ..._EMPTY, bound: _bound(fields), defaults: Object.freeze({ ...defaults }) },
    fn,
  );
}

/**
 * Runs `fn` with `fields` bound over the current frame: the fields it names replace the enclosing
 * frame's, the others, the configured defaults, the log fields and the jobs stay. A send the
 * session makes outside any turn names the message it works for this way.
 */
export function withContextFields<T>(fields: ContextFields, fn: () => T): T {
  const frame = _storage.getStore() ?? _EMPTY;
  return _storage.run({ ...frame, bound: _bound({ ...frame.bound, ...fields }) }, fn);
}

/**
 * Runs `fn` with `fields` added to every log line written inside it, on top of the enclosing
 * frame's (a run's `seq`, the agent loop's `step`); the context fields and jobs stay.
 */
export function withLogFields<T>(fields: Record<string, unknown>, fn: () => T): T {
  const frame = _storage.getStore() ?? _EMPTY;
  return _storage.run({ ...frame, log: Object.freeze({ ...frame.log, ...fields }) }, fn);
}

/**
 * Runs one claimed turn (or the sending of its reply) in the one frame it binds: the message's
 * context replacing the enclosing frame's fields (an entry's stale fields never leak into a turn
 * of another message), the entry's defaults kept, async delivery forced to unsupported because no
 * channel here can deliver anything after the turn ends, `jobs` for its tools, and `log` added.
 */
export function withTurnFrame<T>(turn: TurnFrame, fn: () => T): T {
  const frame = _storage.getStore() ?? _EMPTY;
  return _storage.run({
    bound: _bound({ ...turn.context, async_delivery: false }),
    defaults: frame.defaults,
    log: Object.freeze({ ...frame.log, ...turn.log }),
    jobs: turn.jobs ?? null,
  }, fn);
}

/**
 * Runs one agent turn outside any session (a library call, a unit test): a new frame binding
 * `fields` with async delivery forced to unsupported. A session's turns bind `withTurnFrame`.
 */
export function bindTurn<T>(
  fields: Omit<ContextFields, "async_delivery">,
  defaults: ContextDefaults,
  fn: () => T,
): T {
  return withSessionContext({ ...fields, async_delivery: false }, defaults, fn);
}

/** The log fields of the current frame (lib/runtime/log.ts adds them to each line). */
export function frameLogFields(): FrameLogFields {
  return (_storage.getStore() ?? _EMPTY).log;
}

/** The jobs bound with the running turn, or null outside a session's turn (lib/session/turn_jobs.ts). */
export function frameJobs(): object | null {
  return (_storage.getStore() ?? _EMPTY).jobs;
}

/**
 * Reads one field: the bound value when bound (even ""), else the configured default, else "".
 */
export function contextField(name: ContextField): string {
  const frame = _storage.getStore();
  if (!frame) return "";
  const bound = frame.bound[name];
  if (bound !== undefined) return bound;
  return frame.defaults[name] ?? "";
}

/** True unless the current turn was bound with async delivery unsupported. */
export function asyncDeliverySupported(): boolean {
  return _storage.getStore()?.bound.async_delivery ?? true;
}

/**
 * The current context resolved field by field, as `session_info` reports it and a tool's
 * `run` options carry it.
 */
export function currentContext(): Record<ContextField, string> & { async_delivery: boolean } {
  const out = {} as Record<ContextField, string> & { async_delivery: boolean };
  for (const name of CONTEXT_FIELDS) out[name] = contextField(name);
  out.async_delivery = asyncDeliverySupported();
  return out;
}

/** Reads context defaults from env vars named `SESSION_DEFAULT_<FIELD>` (e.g. SESSION_DEFAULT_PLATFORM). */
export function contextDefaultsFromEnv(env: Record<string, unknown>): ContextDefaults {
  const defaults: ContextDefaults = {};
  for (const name of CONTEXT_FIELDS) {
    const value = env[`SESSION_DEFAULT_${name.toUpperCase()}`];
    if (typeof value === "string") defaults[name] = value;
  }
  return defaults;
}
