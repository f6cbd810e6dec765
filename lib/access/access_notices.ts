// The texts a sender who may not start a turn sees, and the admin's /pair answers; runtime-neutral.

/** The pairing-code message to an unknown sender in a direct chat. */
export function pairingText(code: string): string {
  return `This bot is private. To ask for access, send this pairing code to its owner: ${code} ` +
    "(valid for 1 hour). Once they approve it, send your message again.";
}

/** To a sender whose code is already out (Discord answers every command, so it needs a text). */
export const PAIRING_PENDING_TEXT =
  "This bot is private. Your pairing request is waiting for the owner's approval.";

/** To an unknown sender under `ACCESS_POLICY=allowlist`. */
export const PRIVATE_TEXT = "This bot is private.";

/** The one refusal comment per GitHub issue (`GITHUB_REFUSAL=comment`). */
export const GITHUB_REFUSAL_TEXT =
  "Sorry — this bot answers only the repository's members and collaborators.";

/** To a sender over `USER_TURNS_PER_HOUR`. */
export function quotaText(limit: number, retryAfterMs: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterMs / 60_000));
  return `You have reached the limit of ${limit} message${limit === 1 ? "" : "s"} per hour; ` +
    `this one was not processed. Try again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}

/** The answers to `/pair`. */
export const PAIR_TEXTS = {
  usage: "Usage: /pair CODE — approves a pairing code a new user was given.",
  notAdmin: "Only an admin (ADMIN_USERS) can approve pairing codes.",
  notFound: "No pending pairing has that code (codes expire after an hour).",
  approved: (who: string) => `Approved ${who}. Their next message will be answered.`,
  already: (who: string) => `${who} was already approved.`,
} as const;
