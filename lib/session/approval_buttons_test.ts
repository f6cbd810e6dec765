// Unit tests of approval buttons' data: compact, read back exactly, foreign data refused; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { isChoiceData } from "../chat/mod.ts";
import { approvalButtons, approvalCallRef, parseApprovalClick } from "./approval_buttons.ts";

Deno.test("approvalButtons() name the question in at most 64 bytes and parseApprovalClick() reads them back", () => {
  const longId = "call_" + "x".repeat(200);
  const buttons = approvalButtons(123_456_789, longId);
  assertEquals(buttons.map((b) => b.label), ["Approve once", "This session", "Always", "Deny"]);
  for (const [i, button] of buttons.entries()) {
    assert(isChoiceData(button.data), button.data);
    assertEquals(parseApprovalClick(button.data), {
      seq: 123_456_789,
      call: approvalCallRef(longId),
      choice: (["once", "session", "always", "deny"] as const)[i],
    });
  }
});

Deno.test("approvalCallRef() tells one turn's calls apart; parseApprovalClick() refuses other data", () => {
  assert(approvalCallRef("call_0") !== approvalCallRef("call_1"));
  for (const data of ["bt:a:1:0000000g:o", "bt:a:1:00000000:x", "bt:a::00000000:o", "x", ""]) {
    assertStrictEquals(parseApprovalClick(data), null, data);
  }
});
