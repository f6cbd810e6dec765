// The Worker's side of access control: the access objects by name, and the approve and revoke steps that span them; Workers.
import type { AccessConfig } from "../lib/access/access_policy.ts";
import { senderEntry } from "../lib/access/access_policy.ts";
import type { PairedUser } from "../lib/access/pairing_directory.ts";
import type { AccessDO } from "./access_do.ts";
import type { Env } from "./env.ts";

/** The access object named `name` (see AccessDO for the names), typed with AccessDO's RPC methods. */
export function accessStub(env: Env, name: string): DurableObjectStub<AccessDO> {
  const namespace = env.ACCESS as DurableObjectNamespace<AccessDO>;
  return namespace.get(namespace.idFromName(name));
}

/** The record of one platform sender. */
export function senderStub(env: Env, sender: { platform: string; user: string }) {
  return accessStub(env, `sender:${senderEntry(sender)}`);
}

/** The owner's directory of codes and paired users (off the message path). */
export function directoryStub(env: Env) {
  return accessStub(env, "directory");
}

/** What approving a code did. */
export type PairingApproval =
  | { kind: "approved" | "already_approved"; user: PairedUser }
  | { kind: "not_found" };

/**
 * Approves a pairing code: the directory decides once (two approvals of one code approve once),
 * then the sender's record is marked paired. That second step runs for a repeat too, so an
 * approval cut off between the two is completed by approving again.
 */
export async function approvePairingCode(
  env: Env,
  code: string,
  by: string,
): Promise<PairingApproval> {
  const result = await directoryStub(env).approvePairing(code, by);
  if (result.kind === "not_found") return result;
  await senderStub(env, result.user).approve(by);
  return result;
}

/** How a revocation went. */
export type Revocation = "revoked" | "not_found" | "listed_in_settings";

/** Unpairs a sender: their record first (it decides their next message), then the directory. */
export async function revokeSender(
  env: Env,
  access: AccessConfig,
  sender: { platform: string; user: string },
): Promise<Revocation> {
  if (access.allowed.has(senderEntry(sender))) return "listed_in_settings";
  const wasPaired = await senderStub(env, sender).revoke();
  const wasListed = await directoryStub(env).forgetPaired(sender.platform, sender.user);
  return wasPaired || wasListed ? "revoked" : "not_found";
}
