// Worker entry: the HTTP app and the Durable Object classes (sessions, access records, conversation pointers, Idempotency-Keys); Workers.
import { app } from "./routes.ts";
import type { Env } from "./env.ts";

export { AccessDO } from "./access_do.ts";
export { ConversationPointerDO } from "./conversation_pointer_do.ts";
export { IdempotencyKeyDO } from "./idempotency_key_do.ts";
export { SessionDO } from "./session_do.ts";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
