// Unit tests of the owner's directory of codes and paired users, over node:sqlite; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { sqliteStorage } from "../session/_sqlite_storage.ts";
import { PairingDirectory } from "./pairing_directory.ts";

const T0 = 1_800_000_000_000;
const ann = { code: "ABCDEFGH", platform: "telegram", user: "42", name: "Ann" };

Deno.test("PairingDirectory.approve() approves a code once, then says it was done", () => {
  const dir = new PairingDirectory(sqliteStorage().sql);
  assertStrictEquals(dir.register(ann, T0, T0 + 3_600_000, T0), true);
  assertEquals(dir.pending(T0 + 1).map((p) => p.code), ["ABCDEFGH"]);
  const first = dir.approve("ABCDEFGH", "api:default", T0 + 2);
  assertStrictEquals(first.kind, "approved");
  assertStrictEquals(dir.approve("ABCDEFGH", "telegram:1", T0 + 3).kind, "already_approved");
  assertEquals(dir.pending(T0 + 4), []);
  assertEquals(dir.paired().map((u) => [u.user, u.approved_by]), [["42", "api:default"]]);
});

Deno.test("PairingDirectory.approve() finds no expired, unknown or revoked code", () => {
  const dir = new PairingDirectory(sqliteStorage().sql);
  dir.register(ann, T0, T0 + 10, T0);
  assertStrictEquals(dir.approve("ABCDEFGH", "x", T0 + 10).kind, "not_found");
  assertStrictEquals(dir.approve("ZZZZZZZZ", "x", T0).kind, "not_found");
  dir.register({ ...ann, code: "BCDEFGHJ" }, T0, T0 + 100, T0 + 20);
  assertStrictEquals(dir.approve("BCDEFGHJ", "x", T0 + 30).kind, "approved");
  assertStrictEquals(dir.forget("telegram", "42"), true);
  assertStrictEquals(dir.forget("telegram", "42"), false);
  assertStrictEquals(dir.approve("BCDEFGHJ", "x", T0 + 40).kind, "not_found");
});

Deno.test("PairingDirectory.register() never hands one code to two senders", () => {
  const dir = new PairingDirectory(sqliteStorage().sql);
  assertStrictEquals(dir.register(ann, T0, T0 + 100, T0), true);
  assertStrictEquals(dir.register(ann, T0, T0 + 200, T0 + 1), true);
  assertStrictEquals(dir.register({ ...ann, user: "43" }, T0, T0 + 100, T0), false);
  assertEquals(dir.pending(T0).map((p) => [p.user, p.expires_at]), [[
    "42",
    new Date(T0 + 200).toISOString(),
  ]]);
});

Deno.test("PairingDirectory.register() takes no code past `limit` pending ones of the platform", () => {
  const dir = new PairingDirectory(sqliteStorage().sql);
  const stranger = (n: number) => ({ ...ann, code: `ABCDEFG${"HJKMN"[n]}`, user: `s${n}` });
  assertStrictEquals(dir.register(stranger(0), T0, T0 + 100, T0, 2), true);
  assertStrictEquals(dir.register(stranger(1), T0, T0 + 200, T0, 2), true);
  assertStrictEquals(dir.register(stranger(2), T0, T0 + 100, T0, 2), "full");
  assertStrictEquals(dir.register(stranger(1), T0, T0 + 300, T0 + 1, 2), true, "a repeat");
  assertStrictEquals(
    dir.register({ ...stranger(2), code: "ABCDEFGP", platform: "slack" }, T0, T0 + 100, T0, 2),
    true,
    "another platform's own",
  );
  // One expired: its place is free.
  assertStrictEquals(dir.register(stranger(2), T0, T0 + 400, T0 + 100, 2), true);
  assertEquals(dir.pending(T0 + 100).filter((p) => p.platform === "telegram").length, 2);
});
