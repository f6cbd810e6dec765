// The reference deployment: this repo's Worker, built on the package's public API (functions/mod.ts) with the tools of functions/tools.ts; Workers.
import { defineBaton } from "./mod.ts";
import { tools } from "./tools.ts";

const baton = defineBaton({ tools });

// Exported by the names wrangler.toml's bindings and migrations use.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

export default baton;
