// The chaos run's WhatsApp, LINE, Twilio, Teams and Google Chat sessions: their credentials, bad kinds, and who a session and a message are on each platform; Deno.
import { TEAMS_APP_ID } from "../../test/_support/drivers/teams.ts";
import { TWILIO_ACCOUNT_SID, TWILIO_NUMBER } from "../../test/_support/drivers/twilio.ts";
import { WHATSAPP_PHONE_ID } from "../../test/_support/drivers/whatsapp.ts";

/**
 * What the functions below read of a plan's session (every `ChaosSession` is one): declared here,
 * not taken from the plan, because the plan is built from this file's ways and keys.
 */
export interface NewPlatformSession {
  way: string;
  chatId: number;
}

/** What they read of a plan's message (every `ChaosMessage` is one). */
export interface NewPlatformMessage {
  session: NewPlatformSession;
  updateId: number;
}

/** The five platforms that joined the run after the first four, in table order. */
export const NEW_PLATFORM_WAYS = ["whatsapp", "line", "twilio", "teams", "google-chat"] as const;

/** One of them. */
export type NewPlatformWay = typeof NEW_PLATFORM_WAYS[number];

/** Whether `way` is one of the five. */
export function isNewPlatformWay(way: string): way is NewPlatformWay {
  return (NEW_PLATFORM_WAYS as readonly string[]).includes(way);
}

/**
 * Credentials of the five shared by baton's vars, the senders and the fakes (fixed: none is real);
 * the ids the drivers' shapes name (business number, account, bot number, app) are theirs.
 */
export const NEW_CREDENTIALS = {
  whatsappSecret: "chaos-whatsapp-app-secret",
  whatsappToken: "EAAchaos-whatsapp-access-token",
  /** The business number every WhatsApp session writes to (its customer: the session's chat id). */
  whatsappPhoneId: WHATSAPP_PHONE_ID,
  lineSecret: "chaos-line-channel-secret",
  lineToken: "chaos-line-channel-access-token",
  twilioSid: TWILIO_ACCOUNT_SID,
  twilioToken: "chaos-twilio-auth-token",
  /** The Twilio number every Twilio session texts. */
  twilioNumber: TWILIO_NUMBER,
  /** The origin Twilio is told to call: it signs this URL, not the loopback one. */
  publicUrl: "https://chaos.baton.example",
  teamsAppId: TEAMS_APP_ID,
  teamsPassword: "chaos-teams-app-password",
  /** GOOGLE_CHAT_AUDIENCE: a project number. */
  googleAudience: "424242424242",
} as const;

/** The kinds of bad delivery each of the five gets (see `BAD_KINDS`). */
export const NEW_BAD_KINDS: Record<NewPlatformWay, readonly string[]> = {
  whatsapp: [
    "bad signature",
    "unsigned",
    "malformed JSON",
    "wrong types",
    "truncated body",
    "another number",
  ],
  line: ["bad signature", "unsigned", "malformed JSON", "wrong types", "truncated body"],
  twilio: ["bad signature", "unsigned", "wrong URL signed", "truncated body", "another account"],
  teams: [
    "bad signature",
    "unsigned",
    "wrong audience",
    "expired token",
    "wrong serviceUrl",
    "malformed JSON",
    "wrong types",
  ],
  "google-chat": [
    "bad signature",
    "unsigned",
    "wrong audience",
    "wrong issuer",
    "unknown key",
    "malformed JSON",
    "wrong types",
  ],
};

/** Bad kinds whose signature or token cannot check: answered 401, nothing else. */
const _REFUSED = new Set([
  "bad signature",
  "unsigned",
  "truncated body",
  "wrong URL signed",
  "wrong audience",
  "expired token",
  "wrong serviceUrl",
  "wrong issuer",
  "unknown key",
]);

/** The status a bad delivery of `what` on `way` must get, where one is certain (401). */
export function expectedRefusal(way: string, what: string): number | undefined {
  return isNewPlatformWay(way) && _REFUSED.has(what) ? 401 : undefined;
}

/** A session's key (GET /v1/sessions/{key}) on one of the five. */
export function newPlatformKey(s: NewPlatformSession): string {
  const chat = newPlatformChat(s);
  switch (s.way) {
    case "whatsapp":
      return `whatsapp:${NEW_CREDENTIALS.whatsappPhoneId}:${chat}`;
    case "line":
      return `line:user:${chat}`;
    case "twilio":
      return `twilio:${NEW_CREDENTIALS.twilioNumber}:${chat}`;
    default:
      return `${s.way}:${chat}`;
  }
}

/**
 * A session's chat as its platform's API names where a reply goes (`ShownPost.chat`): the
 * WhatsApp customer, the LINE user, the Twilio sender, the Teams conversation, the Chat DM space.
 */
export function newPlatformChat(s: NewPlatformSession): string {
  switch (s.way) {
    case "whatsapp":
      return String(s.chatId);
    case "line":
      return `Uchaos${s.chatId}`;
    case "twilio":
      return `+1555${s.chatId}`;
    case "teams":
      return `a:1chaos-${s.chatId}`;
    case "google-chat":
      return `spaces/CHAOS${s.chatId}`;
    default:
      throw new Error(`${s.way} is not one of the five`);
  }
}

/**
 * The platform's id of a message, the same in every redelivery of it: WhatsApp's wamid, LINE's
 * webhookEventId, Twilio's MessageSid, the Teams activity id, the Chat message's name.
 */
export function platformMessageId(m: NewPlatformMessage): string {
  const n = m.updateId;
  switch (m.session.way) {
    case "whatsapp":
      return `wamid.CHAOS${n}`;
    case "line":
      return `01CHAOS${String(n).padStart(19, "0")}`;
    case "twilio":
      return `SM${n.toString(16).padStart(32, "0")}`;
    case "teams":
      return `1700${n}`;
    default:
      return `${newPlatformChat(m.session)}/messages/chaos${n}`;
  }
}

/**
 * What a reply names of the message it answers, where its platform links them: the WhatsApp
 * message the first part quotes, the Teams activity every part replies to, the Chat thread (each
 * DM message starts its own). LINE and Twilio replies name none.
 */
export function replyLinkOf(m: NewPlatformMessage): string | undefined {
  switch (m.session.way) {
    case "whatsapp":
    case "teams":
      return platformMessageId(m);
    case "google-chat":
      return `${newPlatformChat(m.session)}/threads/t${m.updateId}`;
    default:
      return undefined;
  }
}
