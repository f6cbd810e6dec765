// Per-turn session context bound with AsyncLocalStorage; any runtime with node:async_hooks (workerd: nodejs_compat).
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

interface _Frame {
  readonly bound: Readonly<ContextFields>;
  readonly defaults: Readonly<ContextDefaults>;
}

const _storage = new AsyncLocalStorage<_Frame>();

/**
 * Runs `fn` with `fields` bound as the current context and `defaults` as the fallback for
 * fields left unbound. Frames do not nest: the new frame replaces the outer one entirely.
 */
export function withSessionContext<T>(
  fields: ContextFields,
  defaults: ContextDefaults,
  fn: () => T,
): T {
  const bound: ContextFields = {};
  for (const name of CONTEXT_FIELDS) {
    const value = fields[name];
    if (value !== undefined) bound[name] = String(value);
  }
  if (fields.async_delivery !== undefined) bound.async_delivery = fields.async_delivery;
  return _storage.run(
    { bound: Object.freeze(bound), defaults: Object.freeze({ ...defaults }) },
    fn,
  );
}

/**
 * Runs `fn` with `fields` bound over the current frame: the fields it names replace the enclosing
 * frame's, the others and the configured defaults stay. The session's own work that runs outside
 * a caller's frame (a drain, the alarm, a send) names the message it works for this way.
 */
export function withContextFields<T>(fields: ContextFields, fn: () => T): T {
  const frame = _storage.getStore();
  return withSessionContext({ ...frame?.bound, ...fields }, frame?.defaults ?? {}, fn);
}

/**
 * Runs one agent turn of this bundle: binds `fields` with async delivery forced to unsupported,
 * because no channel here can deliver anything after the turn ends. Every entry path that runs
 * a turn goes through this function.
 */
export function bindTurn<T>(
  fields: Omit<ContextFields, "async_delivery">,
  defaults: ContextDefaults,
  fn: () => T,
): T {
  return withSessionContext({ ...fields, async_delivery: false }, defaults, fn);
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

/** The current context resolved field by field, as `session_info` reports it. */
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
