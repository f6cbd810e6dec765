// Unit tests of the access settings and the decision that costs no I/O; Deno.
import { assertEquals } from "@std/assert";
import type { Sender } from "../chat/mod.ts";
import {
  type AccessConfig,
  accessConfig,
  type AccessMode,
  accessVerdict,
  refusalFor,
  senderEntry,
} from "./access_policy.ts";

const dm = (platform: string, user: string, extra: Partial<Sender> = {}): Sender => ({
  platform,
  user,
  name: "",
  direct: true,
  ...extra,
});

/**
 * The access config of settings written as their env texts, lists split on commas (parsing the
 * env proper, defaults and ranges, is readConfig's: lib/deployment/config_test.ts).
 */
function accessOf(env: Record<string, string> = {}): AccessConfig {
  const list = (text: string | undefined) => text?.split(",") ?? [];
  return accessConfig({
    mode: (env.ACCESS_POLICY ?? "pairing") as AccessMode,
    allowed: list(env.ALLOWED_USERS),
    admins: list(env.ADMIN_USERS),
    githubAssociations: env.GITHUB_ALLOWED_ASSOCIATIONS
      ? list(env.GITHUB_ALLOWED_ASSOCIATIONS)
      : ["OWNER", "MEMBER", "COLLABORATOR"],
    githubRefusal: env.GITHUB_REFUSAL === "comment" ? "comment" : "silence",
    userTurnsPerHour: null,
    maxPendingPairings: 50,
  });
}

Deno.test("accessConfig() reads platform:user lists, admins included in the allowed, GitHub logins without case", () => {
  const config = accessOf({
    ALLOWED_USERS: " telegram:123456, slack:T0123/U0456 ,github:OctoCat,bad,:x,y:",
    ADMIN_USERS: "discord:80351110224678912",
  });
  assertEquals([...config.allowed].sort(), [
    "discord:80351110224678912",
    "github:octocat",
    "slack:T0123/U0456",
    "telegram:123456",
  ]);
  assertEquals([...config.admins], ["discord:80351110224678912"]);
  assertEquals(senderEntry({ platform: "GitHub", user: "OctoCat" }), "github:octocat");
});

Deno.test("accessVerdict() allows listed users, admins, platform wildcards and everyone under open", () => {
  const config = accessOf({
    ALLOWED_USERS: "telegram:1,slack:*",
    ADMIN_USERS: "telegram:9",
  });
  assertEquals(accessVerdict(config, dm("telegram", "1")), { kind: "allowed", admin: false });
  assertEquals(accessVerdict(config, dm("telegram", "9")), { kind: "allowed", admin: true });
  assertEquals(accessVerdict(config, dm("slack", "T1/U1")), { kind: "allowed", admin: false });
  assertEquals(accessVerdict(config, dm("telegram", "2")), { kind: "unlisted" });
  assertEquals(accessVerdict(config, dm("discord", "1")), { kind: "unlisted" });
  const open = accessOf({ ACCESS_POLICY: "open" });
  assertEquals(accessVerdict(open, dm("telegram", "2")), { kind: "allowed", admin: false });
});

Deno.test("accessVerdict() trusts GitHub authors by association, and the generic webhook unless generic users are listed", () => {
  const config = accessOf({});
  const github = (association?: string) => dm("github", "x", { direct: false, association });
  assertEquals(accessVerdict(config, github("COLLABORATOR")).kind, "allowed");
  assertEquals(accessVerdict(config, github("member")).kind, "allowed");
  assertEquals(accessVerdict(config, github("CONTRIBUTOR")).kind, "unlisted");
  assertEquals(accessVerdict(config, github(undefined)).kind, "unlisted");
  const owners = accessOf({ GITHUB_ALLOWED_ASSOCIATIONS: "OWNER" });
  assertEquals(accessVerdict(owners, github("MEMBER")).kind, "unlisted");
  assertEquals(accessVerdict(config, dm("generic", "anyone")).kind, "allowed");
  const listed = accessOf({ ALLOWED_USERS: "generic:ops" });
  assertEquals(accessVerdict(listed, dm("generic", "anyone")).kind, "unlisted");
  assertEquals(accessVerdict(listed, dm("generic", "ops")).kind, "allowed");
});

Deno.test("refusalFor() sends codes and notices only to direct chats, and one comment on GitHub only when asked", () => {
  const pairing = accessOf({});
  assertEquals(refusalFor(pairing, dm("telegram", "1")), "pairing");
  assertEquals(refusalFor(pairing, dm("telegram", "1", { direct: false })), "silence");
  assertEquals(
    refusalFor(accessOf({ ACCESS_POLICY: "allowlist" }), dm("slack", "u")),
    "private",
  );
  assertEquals(refusalFor(pairing, dm("github", "x", { direct: false })), "silence");
  assertEquals(
    refusalFor(
      accessOf({ GITHUB_REFUSAL: "comment" }),
      dm("github", "x", { direct: false }),
    ),
    "comment",
  );
});
