// The one JSON decoder of bytes that came from outside (request bodies, API answers): strict UTF-8, a typed error; runtime-neutral.

/** A verified delivery whose payload is malformed (answered 400). */
export class PayloadError extends Error {
  override name = "PayloadError";
}

/**
 * Parses `body` as JSON, or throws `PayloadError`: bytes that are not UTF-8 are refused, not
 * patched with replacement characters (a leading BOM is dropped). The codebase's one JSON decoder
 * of bytes: webhook and API request bodies, platform and MCP answers.
 */
export function parseJsonBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new PayloadError("request body is not valid JSON");
  }
}

/** As `parseJsonBody`, but undefined (never a throw) for bytes that are not JSON. */
export function jsonOrUndefined(body: Uint8Array): unknown {
  try {
    return parseJsonBody(body);
  } catch {
    return undefined;
  }
}
