// The one logger: JSON lines with level, message, time and the bound session context, secrets redacted; any runtime with node:async_hooks.
import { currentContext, frameLogFields } from "./session_context.ts";

/**
 * Runs `fn` with fields (a run's `seq`, the agent loop's `step`) added to every line logged
 * inside it, on top of the fields of an enclosing call. They live in the entry's one frame
 * (lib/runtime/session_context.ts) beside the session context, which needs no call.
 */
export { withLogFields } from "./session_context.ts";

/** A log level, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** The levels in order; `LOG_LEVEL` takes one of these. */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** Extra fields of one line: scalars, or anything JSON-serialisable. */
export type LogFields = Record<string, unknown>;

/** Where lines go: console.log for debug/info, console.error for warn/error (what Workers Logs collects). */
export type LogSink = (level: LogLevel, line: string) => void;

/**
 * Field names whose values never reach a line: a secret, token, key, password, signature,
 * authorization or pairing code is replaced by "[redacted]", whatever the caller passed. The match
 * is deliberately broad (a field named `key` is redacted too); the few names it catches that are
 * never secret are allowlisted below.
 */
const _SECRET_NAME = /token|secret|key|passw|authori[sz]ation|cookie|signature|code|credential/i;
/** Names the pattern catches that never hold a secret: a platform's numeric error code among them. */
const _NOT_SECRET = new Set(["session_key", "status_code", "error_code"]);

const _REDACTED = "[redacted]";

let _minimum = 1; // info
let _sink: LogSink = _consoleSink;

/**
 * Sets the lowest level written: each entry point (the Worker's request, a session object) passes
 * its config's `LOG_LEVEL`. Unknown: info.
 */
export function setLogLevel(level: string): void {
  const index = LOG_LEVELS.indexOf(level as LogLevel);
  _minimum = index < 0 ? 1 : index;
}

/** Replaces where lines go (tests); returns a function that restores the previous sink. */
export function setLogSink(sink: LogSink): () => void {
  const previous = _sink;
  _sink = sink;
  return () => void (_sink = previous);
}

/** The logger: `log.info("turn done", { ms })` writes one JSON line with the bound context. */
export const log = {
  debug: (message: string, fields?: LogFields) => _write("debug", message, fields),
  info: (message: string, fields?: LogFields) => _write("info", message, fields),
  warn: (message: string, fields?: LogFields) => _write("warn", message, fields),
  error: (message: string, fields?: LogFields) => _write("error", message, fields),
};

/** An error's name and message for a log field (never its stack or its cause's data). */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : "unknown";
}

/** `fields` with every secret-named field's value replaced, nested objects included. */
export function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [name, value] of Object.entries(fields)) {
    out[name] = _SECRET_NAME.test(name) && !_NOT_SECRET.has(name) ? _REDACTED : _redactValue(value);
  }
  return out;
}

function _redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(_redactValue);
  if (value && typeof value === "object" && !(value instanceof Error)) {
    return redact(value as LogFields);
  }
  return value instanceof Error ? errorText(value) : value;
}

function _write(level: LogLevel, message: string, fields?: LogFields): void {
  if (LOG_LEVELS.indexOf(level) < _minimum) return;
  const line: LogFields = { level, message, time: new Date().toISOString() };
  // Only the context fields that are set: an unbound frame adds nothing.
  for (const [name, value] of Object.entries(currentContext())) {
    if (typeof value === "string" && value !== "") line[name] = value;
  }
  Object.assign(line, redact({ ...frameLogFields(), ...fields }));
  let text: string;
  try {
    text = JSON.stringify(line);
  } catch {
    text = JSON.stringify({ level, message, time: line.time, fields: "unserialisable" });
  }
  _sink(level, text);
}

function _consoleSink(level: LogLevel, line: string): void {
  if (level === "warn" || level === "error") console.error(line);
  else console.log(line);
}
