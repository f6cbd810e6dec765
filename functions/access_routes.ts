// The owner's access API under /v1/access: pending pairing codes, approving one, paired users, revoking; Workers.
import { Hono } from "hono";
import { senderEntry } from "../lib/access/access_policy.ts";
import { normalizePairingCode } from "../lib/access/sender_record.ts";
import { approvePairingCode, directoryStub, revokeSender } from "./access_client.ts";
import { type App, RequestError, requireAdminTenant, requireApiKey } from "./_http.ts";

/** Routes under /v1/access, for admin tenants only (`ADMIN_API_KEYS`). */
export const accessRoutes = new Hono<App>();

accessRoutes.use("*", requireApiKey, requireAdminTenant);

accessRoutes.get("/pairings", async (c) => {
  return c.json({ object: "list", data: await directoryStub(c.env).pendingPairings() });
});

accessRoutes.post("/pairings/:code/approve", async (c) => {
  const code = normalizePairingCode(c.req.param("code"));
  if (!code) {
    throw new RequestError(
      400,
      "code: 8 characters of A-Z and 2-9 without I, L, O",
      "invalid_request_error",
    );
  }
  const approval = await approvePairingCode(c.env, code, `api:${c.var.tenant.name}`);
  if (approval.kind === "not_found") {
    throw new RequestError(
      404,
      "no pending pairing has this code (codes expire after an hour)",
      "not_found",
    );
  }
  if (approval.kind === "already_approved") {
    return c.json({
      error: { message: "this code was already approved", type: "already_approved" },
      user: approval.user,
    }, 409);
  }
  return c.json({ approved: true, user: approval.user });
});

accessRoutes.get("/users", async (c) => {
  const { access } = c.var.config;
  const paired = await directoryStub(c.env).pairedUsers();
  // Listed in the settings too, so the owner sees everyone who may talk to the bot in one place.
  const listed = [...access.allowed].map((entry) => {
    const colon = entry.indexOf(":");
    return {
      platform: entry.slice(0, colon),
      user: entry.slice(colon + 1),
      source: access.admins.has(entry) ? "ADMIN_USERS" : "ALLOWED_USERS",
    };
  });
  return c.json({
    object: "list",
    data: [...paired.map((u) => ({ ...u, source: "pairing" })), ...listed],
  });
});

accessRoutes.delete("/users/:user", async (c) => {
  const sender = senderParam(c.req.param("user"));
  const result = await revokeSender(c.env, c.var.config.access, sender);
  if (result === "listed_in_settings") {
    throw new RequestError(
      409,
      `${senderEntry(sender)} is listed in ALLOWED_USERS or ADMIN_USERS: remove it there`,
      "listed_in_settings",
    );
  }
  if (result === "not_found") throw new RequestError(404, "no such paired user", "not_found");
  return c.json({ revoked: true, platform: sender.platform, user: sender.user });
});

/** A `platform:user` path parameter (URL-encoded; Slack's `T…/U…` carries a slash), or a 400. */
export function senderParam(value: string): { platform: string; user: string } {
  const match = /^([a-z][a-z0-9_-]{0,31}):([^\s]{1,256})$/i.exec(value);
  if (!match) {
    throw new RequestError(400, "user: expected platform:user", "invalid_request_error");
  }
  return { platform: match[1].toLowerCase(), user: match[2] };
}
