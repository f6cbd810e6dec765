// A chat user's data for admins: erasure (DELETE /v1/users/{platform:user}) and their memory across chats, read and forgotten fact by fact (the console's user view); Workers.
import { Hono } from "hono";
import { senderParam } from "./access_routes.ts";
import { eraseChatUser } from "./_erasure.ts";
import { senderStub } from "./access_client.ts";
import { apiUserMemoryStub, apiUserOf } from "./_api_user_memory.ts";
import { type App, requireAdminTenant, requireApiKey } from "./_http.ts";
import type { Env } from "./env.ts";
import { forgetListedFact, listedMemory } from "./_memory_facts.ts";

/** Routes under /v1/users, for admin tenants only (`ADMIN_API_KEYS`). */
export const userRoutes = new Hono<App>();

userRoutes.use("*", requireApiKey, requireAdminTenant);

// Always 200 with what was erased: a repeat (nothing left) answers with empty counts, so a
// retried request reads as done rather than as a failure.
userRoutes.delete("/:user", async (c) => {
  const sender = senderParam(c.req.param("user"));
  return c.json({ erased: true, ...await eraseChatUser(c.env, c.var.config.access, sender) });
});

// What `/memory` would list for the user: each fact numbered as `/forget N` names it, and the
// memory's version, which a Forget must name.
userRoutes.get("/:user/memory", async (c) => {
  const user = c.req.param("user");
  const memory = await _memoryStub(c.env, user).memory();
  return c.json({ object: "user.memory", user: _name(user), ...listedMemory(memory) });
});

// `/forget N` for an admin: `?version=` is the version the list was read at; a memory changed
// since is a 409 (the numbers may name other facts now), a fact not there a 404.
userRoutes.delete("/:user/memory/:n", async (c) => {
  const user = c.req.param("user");
  const n = await forgetListedFact(c, _memoryStub(c.env, user), "GET …/memory");
  // The same answer as an API tenant's `DELETE /v1/memory/{n}`: one shape for one act.
  return c.json({ object: "user.memory", user: _name(user), forgotten: 1, n });
});

/**
 * The access object holding `user`'s memory (lib/access/memory_owner.ts): `platform:user` a chat
 * user's own record; `api:<tenant>:<user>` an API tenant's user (`apiuser:` object).
 */
function _memoryStub(env: Env, user: string) {
  const sender = senderParam(user);
  if (sender.platform !== "api") return senderStub(env, sender);
  const api = apiUserOf(sender.user);
  return apiUserMemoryStub(env, api.tenant, api.user);
}

/** `user` as the records name it (platform in lower case). */
function _name(user: string): string {
  const sender = senderParam(user);
  return `${sender.platform}:${sender.user}`;
}
