// Worker entry: the HTTP app and the session Durable Object class; Workers.
import { app } from "./routes.ts";
import type { Env } from "./env.ts";

export { SessionDO } from "./session_do.ts";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
