// Google Chat's two event shapes in: a Chat API app's interaction events (`MESSAGE`, `CARD_CLICKED`) and a Workspace add-on's event objects, parsed to a turn, a choice or an acknowledgement; runtime-neutral.
import * as z from "zod";
import {
  type Ingress,
  isChoiceData,
  parseJsonBody,
  PayloadError,
  type PlatformChoice,
  type WebhookAnswer,
} from "../chat/mod.ts";
import { jsonField } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { GOOGLE_CHAT_ADD_ON, GOOGLE_CHAT_CHOICE } from "./google_chat_cards.ts";
import { googleChatMedia } from "./google_chat_media.ts";

const _SPACE = /^spaces\/[A-Za-z0-9_-]{1,128}$/;
const _THREAD = /^spaces\/[A-Za-z0-9_-]{1,128}\/threads\/[A-Za-z0-9_.-]{1,128}$/;
const _MESSAGE = /^spaces\/[A-Za-z0-9_-]{1,128}\/messages\/[A-Za-z0-9_.-]{1,128}$/;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _space = z.lazy(() =>
  z.looseObject({
    name: z.string().regex(_SPACE),
    type: z.string().optional(),
    spaceType: z.string().optional(),
    singleUserBotDm: z.boolean().optional(),
    displayName: z.string().max(512).optional(),
  })
);
const _user = z.lazy(() =>
  z.looseObject({
    name: z.string().min(1).max(256),
    displayName: z.string().max(512).optional(),
    type: z.string().optional(),
  })
);
const _thread = z.lazy(() => z.looseObject({ name: z.string().regex(_THREAD) }).nullish());

const _message = z.lazy(() =>
  z.looseObject({
    name: z.string().regex(_MESSAGE),
    text: z.string().max(100_000).optional(),
    argumentText: z.string().max(100_000).optional(),
    thread: _thread,
    attachment: z.unknown().optional(),
  })
);
const _cardMessage = z.lazy(() =>
  z.looseObject({ name: z.string().regex(_MESSAGE), thread: _thread })
);

const _event = z.lazy(() =>
  z.looseObject({
    type: z.literal("MESSAGE"),
    space: _space,
    message: _message,
    user: _user,
  })
);

/**
 * A click on a card button: the card's message (its thread names the session), the clicker, and
 * the button's action twice over — `common` (the current shape: `invokedFunction`, `parameters`
 * as a map) and the older `action` (`actionMethodName`, `parameters` as key/value pairs).
 */
const _click = z.lazy(() =>
  z.looseObject({
    type: z.literal("CARD_CLICKED"),
    eventTime: z.string().max(64).optional(),
    space: _space,
    message: _cardMessage,
    user: _user,
    common: z.looseObject({
      invokedFunction: z.string().max(256).optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
    }).optional(),
    action: z.looseObject({
      actionMethodName: z.string().max(256).optional(),
      parameters: z.array(z.looseObject({ key: z.string(), value: z.unknown() })).max(64)
        .optional(),
    }).optional(),
  })
);

/**
 * A Workspace add-on's event object as an add-on that extends Chat gets it (the add-ons endpoint
 * interface, https://developers.google.com/workspace/add-ons/reference/callback-contract, and
 * Google's add-on samples, googleworkspace/add-ons-samples node/chat/*): `commonEventObject`
 * (for a click, `parameters` — `invokedFunction` is not filled in for Chat add-ons, per
 * CommonEventObject in @googleapis/chat), `authorizationEventObject.systemIdToken`, and `chat`:
 * the `user`, the `eventTime` and one payload — `messagePayload` {message, space} for a message
 * (what a Chat API app gets as `MESSAGE`), `buttonClickedPayload` {message, space} for a card
 * click (`CARD_CLICKED`), `addedToSpacePayload`, `removedFromSpacePayload`, `appCommandPayload`…
 */
const _addOnEvent = z.lazy(() =>
  z.looseObject({
    commonEventObject: z.looseObject({
      parameters: z.record(z.string(), z.unknown()).optional(),
    }).optional(),
    chat: z.looseObject({
      user: _user,
      eventTime: z.string().max(64).optional(),
      messagePayload: z.looseObject({ space: _space, message: _message }).optional(),
      buttonClickedPayload: z.looseObject({ space: _space, message: _cardMessage }).optional(),
    }),
  })
);

/** Where a Google Chat reply goes: the space, and the thread it continues. */
export const googleChatTarget = z.lazy(() =>
  z.object({
    platform: z.literal("google-chat"),
    space: z.string().regex(_SPACE),
    thread: z.string().regex(_THREAD).optional(),
  })
);

/** A Google Chat reply target, as stored with the message. */
export type GoogleChatTarget = z.infer<typeof googleChatTarget>;

/** Google Chat reads a synchronous answer as a message: an empty object posts nothing. */
export const GOOGLE_CHAT_ACK: WebhookAnswer = { status: 200, body: {} };
const _IGNORE = { kind: "respond", ...GOOGLE_CHAT_ACK } as const;

/**
 * A request body from Google Chat (either event shape) as a turn, a choice, or acknowledged with
 * no turn; throws `PayloadError` for a malformed event.
 */
export function parseGoogleChatEvent(body: Uint8Array): Ingress<GoogleChatTarget> {
  const raw = parseJsonBody(body);
  const type = jsonField(raw, "type");
  // A Workspace add-on's event object has no `type`: its host app's object (`chat`) says what.
  if (type === undefined && jsonField(raw, "chat") !== undefined) return _parseAddOn(raw);
  if (type === "CARD_CLICKED") return _parseClick(raw);
  // ADDED_TO_SPACE, REMOVED_FROM_SPACE…: acknowledged, no turn.
  if (type !== "MESSAGE") return _IGNORE;
  const parsed = _event.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the MESSAGE event is malformed");
  const { space, message, user } = parsed.data;
  return _messageIngress(space, message, user);
}

/** A message to the app (either event shape) as a turn, or ignored (another app's, empty). */
function _messageIngress(
  space: z.infer<typeof _space>,
  message: z.infer<typeof _message>,
  user: z.infer<typeof _user>,
): Ingress<GoogleChatTarget> {
  if (user.type === "BOT") return _IGNORE; // another app: never a turn
  // In a space Chat sends only messages that mention the app; argumentText is them without it.
  const text = (message.argumentText ?? message.text ?? "").trim();
  // Uploaded files: announced, fetched inside the turn (google_chat_media.ts); one alone is a turn.
  const media = googleChatMedia(message.attachment);
  if (!text && !media.length) return _IGNORE;
  return {
    kind: "message",
    message: {
      ..._origin(space, message, user),
      // The message's resource name: a redelivery names the same message.
      deliveryKey: `google-chat:${message.name}`,
      text,
      ...(media.length ? { media } : {}),
    },
  };
}

/**
 * A Workspace add-on's event: `chat.messagePayload` is the same message a Chat API app gets in a
 * `MESSAGE` event (the same session, delivery key and reply), `chat.buttonClickedPayload` with
 * baton's `choice` parameter the same click as `CARD_CLICKED`; every other payload (added to or
 * removed from a space, app commands, widget updates) is acknowledged.
 */
function _parseAddOn(raw: unknown): Ingress<GoogleChatTarget> {
  const parsed = _addOnEvent.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the add-on event is malformed");
  const { chat, commonEventObject } = parsed.data;
  if (chat.messagePayload) {
    return _messageIngress(chat.messagePayload.space, chat.messagePayload.message, chat.user);
  }
  if (!chat.buttonClickedPayload) return _IGNORE;
  const { space, message } = chat.buttonClickedPayload;
  const choice = _choice(
    space,
    message,
    chat.user,
    chat.eventTime,
    commonEventObject?.parameters?.[GOOGLE_CHAT_CHOICE.parameter],
  );
  // The click is answered in the add-on's envelope: the handle says so (answerGoogleChatChoice).
  return choice ? { kind: "choice", choice: { ...choice, handle: GOOGLE_CHAT_ADD_ON } } : _IGNORE;
}

/**
 * Where a message or a click on a card message comes from, as both are bound: the session (a DM,
 * or a space's thread), the context, the reply target and the sender.
 */
function _origin(
  space: z.infer<typeof _space>,
  message: { name: string; thread?: { name?: string } | null },
  user: { name: string; displayName?: string | undefined },
) {
  const direct = _isDirect(space);
  const thread = message.thread?.name;
  const name = user.displayName || user.name;
  return platformEvent("google-chat", {
    sessionKey: _sessionKey(space.name, direct, thread),
    context: {
      chat_id: space.name,
      chat_name: space.displayName ?? "",
      thread_id: thread ?? "",
      user_id: user.name,
      user_name: name,
      message_id: message.name,
    },
    reply: { platform: "google-chat" as const, space: space.name, ...(thread ? { thread } : {}) },
    sender: { user: user.name, name, direct },
  });
}

/** Whether a space is a direct message with the app. */
function _isDirect(space: z.infer<typeof _space>): boolean {
  return space.type === "DM" || space.spaceType === "DIRECT_MESSAGE" ||
    space.singleUserBotDm === true;
}

/** A DM is one conversation; in a space each thread is its own. */
function _sessionKey(space: string, direct: boolean, thread: string | undefined): string {
  return `google-chat:${!direct && thread ? thread : space}`;
}

/**
 * A `CARD_CLICKED` event on one of baton's buttons: its session is the card message's DM or
 * thread, where the question was posted; the clicker is `user`, as a message's sender is. A click
 * on anything else (another function, another app's data, an app clicking) is acknowledged.
 */
function _parseClick(raw: unknown): Ingress<GoogleChatTarget> {
  const parsed = _click.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the CARD_CLICKED event is malformed");
  const { space, message, user, common, action, eventTime } = parsed.data;
  const fn = common?.invokedFunction ?? action?.actionMethodName;
  const data = common?.parameters?.[GOOGLE_CHAT_CHOICE.parameter] ??
    action?.parameters?.find((p) => p.key === GOOGLE_CHAT_CHOICE.parameter)?.value;
  if (fn !== GOOGLE_CHAT_CHOICE.function) return _IGNORE;
  const choice = _choice(space, message, user, eventTime, data);
  return choice ? { kind: "choice", choice } : _IGNORE;
}

/** A click on a card message as the clicker's choice, or null (not baton's data, an app's click). */
function _choice(
  space: z.infer<typeof _space>,
  message: z.infer<typeof _cardMessage>,
  user: z.infer<typeof _user>,
  eventTime: string | undefined,
  data: unknown,
): PlatformChoice<GoogleChatTarget> | null {
  if (!isChoiceData(data) || user.type === "BOT") return null;
  return {
    ..._origin(space, message, user),
    // Chat gives a click no id of its own: the card, the clicker and the click's time name it.
    deliveryKey: `google-chat:click:${message.name}:${user.name}:${eventTime ?? ""}`,
    data,
  };
}
