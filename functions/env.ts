// The Worker's bindings, vars and secrets; Workers types only.
import type { SettingsEnv } from "../lib/deployment/settings.ts";

/**
 * Bindings and settings of a baton deployment (see docs/reference/settings.md). The settings (vars and
 * secrets) come from the settings table (`lib/deployment/settings.ts`, `SettingsEnv`): add one
 * there, never here; only the bindings are written out below. The Durable Object
 * namespaces are bare here: the classes import `Env`, so their RPC types are put on the stubs by
 * their clients (`sessionStub`, `accessStub`), and this file stays below every class it binds.
 */
export interface Env extends SettingsEnv {
  /** The session objects, one per session key (typed by `sessionStub`). */
  SESSIONS: DurableObjectNamespace;
  /** Access records: one per sender, per API tenant, and the owner's pairing directory (typed by `accessStub`). */
  ACCESS: DurableObjectNamespace;
  /** Conversation pointers: one per conversation state of a request without X-Session-Id (typed by its client). */
  CONVERSATIONS: DurableObjectNamespace;
  /** Idempotency-Key records: one per tenant's key (typed by its client, functions/_idempotency.ts). */
  IDEMPOTENCY_KEYS: DurableObjectNamespace;
  /** The web console's files (`[assets]`, built into `.console/`); absent in bare test Workers. */
  ASSETS?: Fetcher;
  /** The session directory (D1, `migrations/`); optional: without it `GET /v1/sessions` is a 503. */
  DIRECTORY?: D1Database;
  /**
   * Media bytes (R2, bucket `baton-media`; wrangler dev emulates it); optional: without it an
   * image sent to the APIs is refused with a 400 (functions/r2_media_store.ts, lib/media/).
   */
  MEDIA?: R2Bucket;
  /**
   * Outgoing mail (`[[send_email]]`, name `EMAIL_OUT`): email replies and notices, sent from
   * `EMAIL_FROM`; optional: without it mail is read but every answer fails (logged).
   */
  EMAIL_OUT?: SendEmail;
  /**
   * Workers AI (`[ai] binding = "AI"`, left out of baton's wrangler.toml: `wrangler dev` would need
   * a login); optional: with an `@cf/` `TRANSCRIBE_MODEL` and no `TRANSCRIBE_BASE_URL`, voice is
   * transcribed through it (lib/deployment/config.ts reads it with the settings).
   */
  AI?: Ai;
}
