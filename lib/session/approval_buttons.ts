// An approval question's buttons: the choices it carries, their compact data, and reading a click back; runtime-neutral.
import { type Choice, CHOICE_DATA_PREFIX } from "../chat/mod.ts";
import type { ApprovalChoice } from "./approvals.ts";

/** The question a click names: its turn, a short reference to its call, and the choice. */
export interface ApprovalClick {
  seq: number;
  /** `approvalCallRef` of the call asked about: a click on an older question answers nothing. */
  call: string;
  choice: ApprovalChoice;
}

const _LETTER: Record<ApprovalChoice, string> = {
  once: "o",
  session: "s",
  always: "a",
  deny: "d",
};
const _LABEL: Record<ApprovalChoice, string> = {
  once: "Approve once",
  session: "This session",
  always: "Always",
  deny: "Deny",
};
const _DATA = new RegExp(`^${CHOICE_DATA_PREFIX}a:([0-9]{1,15}):([0-9a-f]{8}):([osad])$`);

/**
 * A call id's short reference (FNV-1a, 8 hex digits): model call ids can be long, Telegram's
 * callback data holds 64 bytes, and one turn's few calls never need more to tell them apart.
 */
export function approvalCallRef(callId: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(callId)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** The buttons of the question about call `callId` of turn `seq`, in `APPROVAL_CHOICES` order. */
export function approvalButtons(seq: number, callId: string): Choice[] {
  const call = approvalCallRef(callId);
  return (["once", "session", "always", "deny"] as const).map((choice) => ({
    label: _LABEL[choice],
    data: `${CHOICE_DATA_PREFIX}a:${seq}:${call}:${_LETTER[choice]}`,
    ...(choice === "once" ? { style: "primary" as const } : {}),
    ...(choice === "deny" ? { style: "danger" as const } : {}),
  }));
}

/** The question and choice a click's data names, or null when it is no approval button of baton's. */
export function parseApprovalClick(data: string): ApprovalClick | null {
  const match = _DATA.exec(data);
  if (!match) return null;
  const choice = (Object.keys(_LETTER) as ApprovalChoice[]).find((c) => _LETTER[c] === match[3])!;
  return { seq: Number(match[1]), call: match[2], choice };
}
