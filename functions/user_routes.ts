// The erasure of a chat user for a data-protection request: DELETE /v1/users/{platform:user}, admin tenants only; Workers.
import { Hono } from "hono";
import { senderParam } from "./access_routes.ts";
import { eraseChatUser } from "./_erasure.ts";
import { type App, requireAdminTenant, requireApiKey } from "./_http.ts";

/** Routes under /v1/users, for admin tenants only (`ADMIN_API_KEYS`). */
export const userRoutes = new Hono<App>();

userRoutes.use("*", requireApiKey, requireAdminTenant);

// Always 200 with what was erased: a repeat (nothing left) answers with empty counts, so a
// retried request reads as done rather than as a failure.
userRoutes.delete("/:user", async (c) => {
  const sender = senderParam(c.req.param("user"));
  return c.json({ erased: true, ...await eraseChatUser(c.env, c.var.config.access, sender) });
});
