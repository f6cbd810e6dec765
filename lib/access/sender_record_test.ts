// Unit tests of one sender's record: pairing codes, notice throttles, quota windows; Deno.
import { assert, assertEquals, assertNotEquals, assertStrictEquals } from "@std/assert";
import {
  type AdmitRequest,
  admitToRecord,
  approveRecord,
  GROUP_NOTICE_MS,
  groupNoticeDue,
  newPairingCode,
  normalizePairingCode,
  noticeFailed,
  PAIRING_CODE_MS,
  revokeRecord,
  uncountTurn,
} from "./sender_record.ts";
import { memoryRecordStorage } from "./_memory_record_storage.ts";

const memory = memoryRecordStorage;

const T0 = 1_800_000_000_000;
let _delivery = 0;

function ask(overrides: Partial<AdmitRequest> = {}): AdmitRequest {
  return {
    needsPairing: true,
    refusal: "pairing",
    name: "Ann",
    quota: null,
    deliveryKey: `d${_delivery++}`,
    now: T0,
    ...overrides,
  };
}

Deno.test("admitToRecord() gives an unpaired sender one code message per hour, and a new code once it expires", () => {
  const record = memory();
  const first = admitToRecord(record, ask());
  assert(first.kind === "refused" && first.notify && first.pairing);
  const again = admitToRecord(record, ask({ now: T0 + PAIRING_CODE_MS - 1 }));
  assert(again.kind === "refused" && !again.notify);
  assertEquals(again.pairing?.code, first.pairing.code);
  const later = admitToRecord(record, ask({ now: T0 + PAIRING_CODE_MS }));
  assert(later.kind === "refused" && later.notify && later.pairing);
  assertNotEquals(later.pairing.code, first.pairing.code);
  assertStrictEquals(later.pairing.firstAt, T0);
});

Deno.test("admitToRecord() lets a failed notice be sent again by the next message", () => {
  const record = memory();
  admitToRecord(record, ask());
  noticeFailed(record, "refusal");
  const retry = admitToRecord(record, ask({ now: T0 + 1 }));
  assert(retry.kind === "refused" && retry.notify);
});

Deno.test("admitToRecord() admits a paired sender until revoked; silence writes nothing", () => {
  const record = memory();
  const silent = admitToRecord(record, ask({ refusal: "silence" }));
  assertEquals(silent, { kind: "refused", refusal: "silence", notify: false });
  assertStrictEquals(record.get("pending"), undefined);
  approveRecord(record, "api:default", T0);
  assertEquals(admitToRecord(record, ask()), { kind: "admitted" });
  assert(revokeRecord(record));
  assert(!revokeRecord(record));
  const after = admitToRecord(record, ask({ now: T0 + 1 }));
  assert(after.kind === "refused" && after.notify, "a revoked sender is told again at once");
});

Deno.test("admitToRecord() counts a quota window once per delivery and says when a slot frees", () => {
  const record = memory();
  const quota = { limit: 2, windowMs: 60_000 };
  const at = (now: number, deliveryKey = `q${now}`) =>
    admitToRecord(record, ask({ needsPairing: false, quota, now, deliveryKey }));
  assertEquals(at(T0).kind, "admitted");
  assertEquals(at(T0 + 10, `q${T0}`).kind, "admitted"); // a redelivery is not a second turn
  assertEquals(at(T0 + 20).kind, "admitted");
  const over = at(T0 + 30);
  assertEquals(over, { kind: "over_quota", notify: true, retryAfterMs: 59_970 });
  assertEquals(at(T0 + 40), { kind: "over_quota", notify: false, retryAfterMs: 59_960 });
  assertEquals(at(T0 + 60_000).kind, "admitted");
});

Deno.test("uncountTurn() gives back the turn counted for one delivery key, and only that one", () => {
  const record = memory();
  const quota = { limit: 2, windowMs: 60_000 };
  const at = (deliveryKey: string) =>
    admitToRecord(record, ask({ needsPairing: false, quota, now: T0, deliveryKey })).kind;
  assertEquals([at("a"), at("b"), at("c")], ["admitted", "admitted", "over_quota"]);
  assertStrictEquals(uncountTurn(record, "b"), true);
  assertStrictEquals(uncountTurn(record, "b"), false, "given back once");
  assertStrictEquals(uncountTurn(record, "never"), false);
  assertEquals([at("d"), at("e")], ["admitted", "over_quota"]);
  assertEquals(at("a"), "admitted", "a's turn is still counted: its redelivery is the same turn");
});

Deno.test("groupNoticeDue() lets one notice into a group chat per GROUP_NOTICE_MS; a failed one is taken back", () => {
  const chat = memory();
  assertStrictEquals(groupNoticeDue(chat, T0), true);
  assertStrictEquals(groupNoticeDue(chat, T0 + 1), false);
  assertStrictEquals(groupNoticeDue(chat, T0 + GROUP_NOTICE_MS - 1), false);
  assertStrictEquals(groupNoticeDue(chat, T0 + GROUP_NOTICE_MS), true);
  noticeFailed(chat, "group");
  assertStrictEquals(groupNoticeDue(chat, T0 + GROUP_NOTICE_MS + 1), true, "after a failure");
  // The chat's throttle and a sender's own are apart, even in one record.
  const quota = { limit: 1, windowMs: 60_000 };
  admitToRecord(chat, ask({ needsPairing: false, quota }));
  assertEquals(admitToRecord(chat, ask({ needsPairing: false, quota })), {
    kind: "over_quota",
    notify: true,
    retryAfterMs: 60_000,
  });
  assertStrictEquals(groupNoticeDue(chat, T0 + GROUP_NOTICE_MS + 2), false);
});

Deno.test("newPairingCode() draws 8 unambiguous characters that normalizePairingCode() accepts in any case", () => {
  const codes = new Set(Array.from({ length: 200 }, newPairingCode));
  assertStrictEquals(codes.size, 200);
  for (const code of codes) {
    assert(/^[A-HJKMNP-Z2-9]{8}$/.test(code), code);
    assertStrictEquals(
      normalizePairingCode(` ${code.slice(0, 4).toLowerCase()}-${code.slice(4)} `),
      code,
    );
  }
  assertStrictEquals(normalizePairingCode("ABCDEFG0"), null);
  assertStrictEquals(normalizePairingCode("ABCDEFG"), null);
});
