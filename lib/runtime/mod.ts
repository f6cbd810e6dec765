// The ground every part of lib/ stands on: the per-entry frame, the logger, HTTP out, JSON in, bytes and HMAC, event transports; any runtime with node:async_hooks.
export { decodeBase64, decodeHex, encodeBase64, encodeHex, withPrefix } from "./bytes.ts";
export { constantTimeEquals, hmacSign, hmacVerify } from "./hmac.ts";
export type { HmacHash } from "./hmac.ts";
export {
  fetchOut,
  HTTP_OUT_TIMEOUT_MS,
  OutboundError,
  readJsonAnswer,
  redact,
} from "./http_out.ts";
export { jsonOrUndefined, parseJsonBody, PayloadError } from "./json_body.ts";
export {
  CREDENTIAL_WAIT_OUT,
  RATE_LIMIT_WAIT_OUT,
  retryAfterHeader,
  statedWaitMs,
} from "./retry_after.ts";
export type { RateLimitAnswer, WaitOut, WaitSource } from "./retry_after.ts";
export { jsonDepthError, jsonSchemaObject } from "./json_depth.ts";
export { parsePayload } from "./json_payload.ts";
export { errorText, log, LOG_LEVELS, setLogLevel, setLogSink, withLogFields } from "./log.ts";
export type { LogLevel } from "./log.ts";
export {
  asyncDeliverySupported,
  bindTurn,
  contextDefaultsFromEnv,
  currentContext,
  frameJobs,
  frameLogFields,
  withContextFields,
  withSessionContext,
  withTurnFrame,
} from "./session_context.ts";
export type { ContextDefaults, ContextFields, SessionContext } from "./session_context.ts";
export { ndjsonTransport, readNdjson, sseTransport, TransportTee } from "./transport.ts";
export type { SseEvent, Transport } from "./transport.ts";
