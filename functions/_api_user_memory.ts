// Where an API user's memory lives (their own `apiuser:<tenant>:<user>` access object), named from a tenant and a user or from an admin's `api:<tenant>:<user>`; Workers.
import { apiUserMemoryObject } from "../lib/access/memory_owner.ts";
import { accessStub } from "./access_client.ts";
import { RequestError } from "./_http.ts";
import type { Env } from "./env.ts";

/** The access object holding the memory of API tenant `tenant`'s user `user`. */
export function apiUserMemoryStub(env: Env, tenant: string, user: string) {
  return accessStub(env, apiUserMemoryObject(tenant, user));
}

/**
 * The tenant and user an admin names as `api:<tenant>:<user>` (`senderParam`'s user part being
 * `<tenant>:<user>`); a 400 when either is missing.
 */
export function apiUserOf(senderUser: string): { tenant: string; user: string } {
  const at = senderUser.indexOf(":");
  const tenant = at > 0 ? senderUser.slice(0, at) : "";
  const user = at > 0 ? senderUser.slice(at + 1) : "";
  if (!tenant || !user) {
    throw new RequestError(400, "user: expected api:<tenant>:<user>", "invalid_request_error");
  }
  return { tenant, user };
}
