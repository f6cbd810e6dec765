// Whose memory a turn reads and writes: the access object of its chat user, or of its API tenant's `user`; runtime-neutral.
import { tenantOfSessionKey } from "../api/mod.ts";
import { senderEntry } from "./access_policy.ts";
import { jobCreator, type JobCreatorContext } from "./job_creator.ts";

/**
 * A turn's memory owner: `object`, the access object that keeps the memory (a chat user's own
 * `sender:<platform>:<user>` record, the one access control consults; an API user's own
 * `apiuser:<tenant>:<user>` object, so tenants never share one), or why the turn has none.
 */
export type MemoryOwner = { object: string } | { none: string };

/**
 * The memory owner of a turn with `context`. `group`: the turn's chat is shared with others, where
 * a user's memory would be read out to the other members — no memory there. An API request
 * without `user` has none either: its callers would all share one; nor has a scheduled job's turn
 * (`job_id`), which does not record whether its chat is shared.
 */
export function memoryOwner(
  context: JobCreatorContext & { job_id?: string },
  group: boolean,
): MemoryOwner {
  if (context.job_id) return { none: "Memory is not used in scheduled tasks." };
  const platform = context.platform ?? "";
  if (platform === "api") {
    const tenant = tenantOfSessionKey(context.session_key ?? "");
    const user = context.user_id ?? "";
    if (tenant === null || !user) {
      return { none: "Memory is unavailable: this API request has no `user` to remember for." };
    }
    return { object: apiUserMemoryObject(tenant, user) };
  }
  if (group) return { none: "Memory is kept in direct chats only, not in a group chat." };
  const sender = jobCreator(context);
  if (!sender) return { none: "Memory is unavailable: this chat has no user to remember for." };
  return { object: `sender:${senderEntry(sender)}` };
}

/**
 * The access object of API tenant `tenant`'s user `user` (a request's `user`): their memory, and
 * nothing else. Named by both, so tenants with the same `user` never share one.
 */
export function apiUserMemoryObject(tenant: string, user: string): string {
  return `apiuser:${tenant}:${user}`;
}
