// An API tenant's users' memory across chats (remember/recall), seen and forgotten by the tenant's own key: GET/DELETE /v1/memory?user=…, DELETE /v1/memory/{n}; Workers.
import { Hono } from "hono";
import type { Context } from "hono";
import { type App, RequestError, requireApiKey } from "./_http.ts";
import { apiUserMemoryStub } from "./_api_user_memory.ts";
import { forgetListedFact, listedMemory } from "./_memory_facts.ts";

/**
 * Routes under /v1/memory: the memory of `?user=` (a request's `user`) of the calling key's
 * tenant — an API user's `/memory` and `/forget`. A tenant names only its own users: the object
 * read is `apiuser:<the key's tenant>:<user>`, so another tenant's user of the same name is never
 * reached.
 */
export const memoryRoutes = new Hono<App>();

memoryRoutes.use("*", requireApiKey);

// What `/memory` lists: each fact numbered as DELETE /v1/memory/{n} names it, and the version a
// one-fact delete must name.
memoryRoutes.get("/", async (c) => {
  const user = _user(c);
  const memory = await apiUserMemoryStub(c.env, c.var.tenant.name, user).memory();
  return c.json({ object: "user.memory", user, ...listedMemory(memory) });
});

// `/forget`: every fact; a repeat forgets nothing more and says 0.
memoryRoutes.delete("/", async (c) => {
  const user = _user(c);
  const forgotten = await apiUserMemoryStub(c.env, c.var.tenant.name, user).forgetAllFacts();
  return c.json({ object: "user.memory", user, forgotten });
});

// `/forget N` at the version listed: a memory changed since is a 409 (the numbers may name other
// facts now), a fact not there a 404.
memoryRoutes.delete("/:n", async (c) => {
  const user = _user(c);
  const stub = apiUserMemoryStub(c.env, c.var.tenant.name, user);
  const n = await forgetListedFact(c, stub, "GET /v1/memory");
  return c.json({ object: "user.memory", user, forgotten: 1, n });
});

/** `?user=`: the API request's `user` whose memory is meant (1 to 256 characters), else a 400. */
function _user(c: Context<App>): string {
  const user = c.req.query("user") ?? "";
  if (!user || user.length > 256) {
    throw new RequestError(
      400,
      "user: expected the `user` your requests send (1 to 256 characters)",
      "invalid_request_error",
    );
  }
  return user;
}
