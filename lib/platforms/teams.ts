// Microsoft Teams (Bot Framework) adapter: activities in as Bot Framework JWTs (OpenID keys, endorsements, serviceUrl), Bot Connector replies, Adaptive Card buttons and typing out with a client-credentials token; runtime-neutral (fetch, Web Crypto, jose).
import * as z from "zod";
import { log } from "../runtime/mod.ts";
import {
  approvalClickText,
  type Choice,
  type ClickAnswer,
  type Ingress,
  isChoiceData,
  type OutgoingFile,
  parseJsonBody,
  type PartSend,
  PayloadError,
  type PlatformAdapter,
  type PlatformChoice,
  type PlatformEnv,
  type RawRequest,
  type SendResult,
  type Unverifiable,
} from "../chat/mod.ts";
import { detail, ignore, jsonField, retryAfterHeader, sendRequest } from "./_kit.ts";
import { platformEvent } from "./_platform_event.ts";
import { bearerToken, forgetAccessToken, verifyJwt } from "./_jwt.ts";
import { teamsBotToken } from "./teams_token.ts";
import { fetchTeamsMedia, teamsMedia } from "./teams_media.ts";
import { teamsFileActivity } from "./teams_files.ts";
import { fileAsText } from "./_file_out.ts";

const _DEFAULT_OPENID_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration";
/** The issuer of every token the Bot Connector sends to a bot. */
export const TEAMS_ISSUER = "https://api.botframework.com";
/** Teams states no wait for some throttles: a second, then the outbox backs off further. */
const _DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;
/** A service URL as the channel names it; http only matters for tests and the emulator. */
const _SERVICE_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/i;

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _account = z.lazy(() =>
  z.looseObject({
    id: z.string().min(1).max(512),
    name: z.string().max(512).optional(),
    aadObjectId: z.string().max(128).optional(),
  })
);

const _activity = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    id: z.string().min(1).max(512),
    serviceUrl: z.string().max(512).regex(_SERVICE_URL),
    channelId: z.string().min(1).max(64),
    from: _account,
    recipient: _account,
    conversation: z.looseObject({
      id: z.string().min(1).max(512),
      name: z.string().max(512).nullish(),
      conversationType: z.string().max(64).optional(),
      isGroup: z.boolean().optional(),
    }),
    text: z.string().max(200_000).optional(),
    attachments: z.unknown().optional(),
    /** The card message a click answers (an `Action.Submit` comes as a reply to it). */
    replyToId: z.string().min(1).max(512).optional(),
    /** An `Action.Submit`'s data: present on a card click, absent on a typed message. */
    value: z.unknown().optional(),
    entities: z.array(z.looseObject({
      type: z.string(),
      text: z.string().max(1024).optional(),
      mentioned: z.looseObject({ id: z.string() }).optional(),
    })).optional(),
  })
);

/** Where a Teams reply goes: the Bot Connector the activity came through, its conversation, the message answered. */
const _target = z.lazy(() =>
  z.object({
    platform: z.literal("teams"),
    serviceUrl: z.string().max(512).regex(_SERVICE_URL),
    conversation: z.string().min(1).max(512),
    replyTo: z.string().min(1).max(512).optional(),
  })
);

/** A Teams reply target, as stored with the message. */
export type TeamsTarget = z.infer<typeof _target>;

/**
 * The key of an `Action.Submit`'s `data` object that holds a choice's data. An object, not the
 * bare string: Teams merges a card's inputs into `data` and hands back an object either way.
 */
const _CHOICE_KEY = "baton_choice";
/**
 * Adaptive Cards 1.2: the first version with action `style`, and one every Teams client (desktop,
 * web and mobile) renders.
 */
const _CARD_VERSION = "1.2";

/** The claim in which the Bot Connector names the activity's service URL: lowercase, unlike the activity's field. */
export const SERVICE_URL_CLAIM = "serviceurl";

/**
 * Bot Framework channel authentication: a bearer JWT signed by a key from the OpenID metadata's
 * key set, issued by the Bot Framework, for this bot (audience = app id), within ±5 minutes; the
 * key must endorse the activity's channel, and the token's `serviceurl` claim (lowercase, as the
 * Bot Connector signs it: `AuthenticationConstants.ServiceUrlClaim` in botframework-connector) must
 * name the activity's `serviceUrl` exactly — the only URL a reply will ever be sent to.
 */
async function _verify(
  request: RawRequest,
  env: PlatformEnv,
): Promise<string | Unverifiable | null> {
  const appId = env.TEAMS_APP_ID;
  if (!appId) return "TEAMS_APP_ID is not set";
  const token = bearerToken(request.headers);
  if (!token) return "missing Authorization: Bearer token";
  const verified = await verifyJwt(
    token,
    { openIdUrl: env.TEAMS_OPENID_URL || _DEFAULT_OPENID_URL },
    { issuer: TEAMS_ISSUER, audience: appId, algorithms: ["RS256"] },
    request.nowSeconds,
  );
  if (typeof verified === "string" || "unavailable" in verified) return verified;
  let body: unknown;
  try {
    body = parseJsonBody(request.body);
  } catch {
    return null; // nothing in it is trusted: parse answers 400
  }
  // Compared where present; a message without them is malformed (400), so no reply can ever go
  // to a serviceUrl the token did not name.
  const serviceUrl = jsonField(body, "serviceUrl");
  const channelId = jsonField(body, "channelId");
  const endorsements = verified.key.endorsements;
  if (
    channelId !== undefined &&
    !(Array.isArray(endorsements) && typeof channelId === "string" &&
      endorsements.includes(channelId))
  ) {
    return "the signing key does not endorse the activity's channel";
  }
  if (serviceUrl !== undefined && verified.payload[SERVICE_URL_CLAIM] !== serviceUrl) {
    return "the token's serviceurl claim does not match the activity";
  }
  return null;
}

function _parse(body: Uint8Array): Ingress<TeamsTarget> {
  const raw = parseJsonBody(body);
  // conversationUpdate, typing, messageReaction, invoke…: acknowledged, no turn.
  if (jsonField(raw, "type") !== "message") return ignore();
  const parsed = _activity.safeParse(raw);
  if (!parsed.success) throw new PayloadError("the message activity is malformed");
  const activity = parsed.data;
  // A card's Action.Submit comes as a message with `value`: a click, never a turn.
  if (activity.value !== undefined) return _parseClick(activity);
  const { conversation, from, recipient } = activity;
  const direct = _isDirect(activity);
  let text = activity.text ?? "";
  const self = (activity.entities ?? []).filter((e) =>
    e.type === "mention" && e.mentioned?.id === recipient.id && e.text
  );
  // A channel or group chat hears the bot only when mentioned (or a command): the mention goes.
  for (const mention of self) text = text.split(mention.text ?? "").join("");
  text = text.trim();
  if (!direct && self.length === 0 && !text.startsWith("/")) return ignore("not mentioned");
  // Images and files: announced, fetched inside the turn (teams_media.ts); one alone is a turn.
  const media = teamsMedia(activity.attachments, activity.serviceUrl);
  if (!text && !media.length) return ignore("no text");
  const { user, name } = _person(from);
  return {
    kind: "message",
    message: platformEvent("teams", {
      // A channel's conversation id names the thread (`…;messageid=…`): one session per thread.
      sessionKey: `teams:${conversation.id}`,
      // Activity ids are unique within a conversation; Teams resends with the same one.
      deliveryKey: `teams:${conversation.id}:${activity.id}`,
      text,
      ...(media.length ? { media } : {}),
      context: {
        chat_id: conversation.id,
        chat_name: conversation.name ?? "",
        thread_id: "",
        user_id: user,
        user_name: name,
        message_id: activity.id,
      },
      reply: {
        platform: "teams",
        serviceUrl: activity.serviceUrl,
        conversation: conversation.id,
        replyTo: activity.id,
      },
      sender: { user, name, direct },
    }),
  };
}

type _Activity = z.infer<typeof _activity>;

/** Whether the activity's conversation is a personal chat with the bot. */
function _isDirect({ conversation }: _Activity): boolean {
  return conversation.conversationType === "personal" ||
    (conversation.conversationType === undefined && conversation.isGroup !== true);
}

/** Who sent an activity, as access control names them. */
function _person(from: _Activity["from"]): { user: string; name: string } {
  // The AAD object id is the person across bots and tenants' chats; the channel id where absent.
  const user = from.aadObjectId || from.id;
  return { user, name: from.name || user };
}

/**
 * A click on one of baton's card buttons: the `Action.Submit` arrives as the clicker's message
 * activity, `value` carrying the button's `data` and no text, in the conversation (and channel
 * thread) of the card, so its session is the question's. Any other card's submit is ignored.
 */
function _parseClick(activity: _Activity): Ingress<TeamsTarget> {
  const data = jsonField(activity.value, _CHOICE_KEY);
  if (!isChoiceData(data)) return ignore("not baton's card");
  const { conversation, from } = activity;
  const { user, name } = _person(from);
  // The card's own id where Teams names it, so that a notice answers the question.
  const question = activity.replyToId ?? activity.id;
  return {
    kind: "choice",
    choice: platformEvent("teams", {
      sessionKey: `teams:${conversation.id}`,
      // Each click is an activity of its own; Teams resends one with the same id.
      deliveryKey: `teams:click:${conversation.id}:${activity.id}`,
      data,
      context: {
        chat_id: conversation.id,
        chat_name: conversation.name ?? "",
        thread_id: "",
        user_id: user,
        user_name: name,
        message_id: question,
      },
      reply: {
        platform: "teams",
        serviceUrl: activity.serviceUrl,
        conversation: conversation.id,
        replyTo: question,
      },
      sender: { user, name, direct: _isDirect(activity) },
    }),
  };
}

/**
 * An Adaptive Card with the question's text and one `Action.Submit` per choice. Submit rather than
 * the newer `Action.Execute`: Execute's click is an `invoke` whose HTTP answer must be an invoke
 * response on every path, the route's access refusals and ignores included, while a Submit's click
 * is an ordinary message activity that any 200 acknowledges, as every other activity is.
 */
function _card(text: string, choices: readonly Choice[]) {
  return {
    type: "AdaptiveCard",
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    version: _CARD_VERSION,
    body: [{ type: "TextBlock", text, wrap: true }],
    actions: choices.map((choice) => ({
      type: "Action.Submit",
      title: choice.label,
      data: { [_CHOICE_KEY]: choice.data },
      ...(choice.style ? { style: choice.style === "danger" ? "destructive" : "positive" } : {}),
    })),
  };
}

/** The activity that carries part `text`: markdown text, or a card where the part asks. */
function _messageActivity(target: TeamsTarget, text: string, part: PartSend) {
  const replyTo = target.replyTo ? { replyToId: target.replyTo } : {};
  if (!part.choices?.length) return { type: "message", text, textFormat: "markdown", ...replyTo };
  return {
    type: "message",
    attachments: [{
      contentType: "application/vnd.microsoft.card.adaptive",
      content: _card(text, part.choices),
    }],
    ...replyTo,
  };
}

function _send(
  target: TeamsTarget,
  text: string,
  part: PartSend,
  env: PlatformEnv,
): Promise<SendResult> {
  return _post(target, _messageActivity(target, text, part), part.leaving, env);
}

/**
 * Posts one activity to the target's conversation through the Bot Connector of its verified
 * `serviceUrl`, with the bot's client-credentials token (fetched once, cached, dropped on a 401).
 */
async function _post(
  target: TeamsTarget,
  activity: Record<string, unknown>,
  leaving: (() => void) | undefined,
  env: PlatformEnv,
): Promise<SendResult> {
  const password = env.TEAMS_APP_PASSWORD ?? "";
  const token = await teamsBotToken(env);
  if (!token.ok) return token;
  const { cacheKey } = token;
  const root = target.serviceUrl.replace(/\/+$/, "");
  const url = `${root}/v3/conversations/${encodeURIComponent(target.conversation)}/activities`;
  const result = await sendRequest(url, {
    method: "POST",
    headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
    body: JSON.stringify(activity),
  }, {
    api: "Bot Connector API",
    leaving,
    secrets: [token.token, password],
    // Teams asks to retry 412 (a thread busy) like a throttle; neither posted anything.
    rateLimited: ({ status }) => status === 429 || status === 412,
    waitFrom: [retryAfterHeader],
    defaultWaitMs: _DEFAULT_RATE_LIMIT_WAIT_MS,
    describe: ({ status, body }) =>
      `the Bot Connector API answered ${status}${
        detail(jsonField(body, "error", "code") ?? jsonField(body, "message"))
      }`,
  });
  // The token was refused (revoked, rotated password): the next send fetches a new one.
  if (!result.ok && result.status === 401) forgetAccessToken(cacheKey);
  return result;
}

/**
 * Answers a judged click. Teams has no answer for the clicker alone to an `Action.Submit` (and the
 * webhook's answer to a message activity shows nothing), so only what the clicker must know and
 * nothing else would tell them is posted, naming them, in the conversation: a click refused as
 * not theirs. An answered click shows in the turn going on; a late or repeated one ("Already
 * answered") changes nothing, and Teams may deliver a click twice; a stranger's click has had the
 * access gate's own notice, which is throttled. A failure is logged only: the click is judged.
 */
async function _answerChoice(
  choice: PlatformChoice<TeamsTarget>,
  answer: ClickAnswer,
  env: PlatformEnv,
): Promise<{ status: number; body: unknown }> {
  if (answer.kind === "not_yours") {
    const activity = {
      type: "message",
      text: `${choice.sender.name}: ${approvalClickText(answer)}`,
      ...(choice.reply.replyTo ? { replyToId: choice.reply.replyTo } : {}),
    };
    const result = await _post(choice.reply, activity, undefined, env);
    if (!result.ok) log.warn("teams: a click was not answered", { error: result.message });
  }
  return { status: 200, body: { ok: true } };
}

/**
 * A `typing` activity in the target's conversation: Teams shows the bot typing for a few seconds,
 * or until its next message. A failure or a throttle (429, 412) stops the renewals for the turn.
 */
async function _typing(target: TeamsTarget, env: PlatformEnv): Promise<boolean> {
  return (await _post(target, { type: "typing" }, undefined, env)).ok;
}

/**
 * Microsoft Teams through the Bot Framework: activities in (personal chats; channel and group
 * chat messages that mention the bot, the mention removed; their images and files, fetched inside
 * the turn; clicks on baton's card buttons; every
 * other activity acknowledged), replies out through the Bot Connector of the activity's verified
 * `serviceUrl` (a question as an Adaptive Card with its buttons; a file by its signed link, an
 * image inline), typing while a turn runs. No
 * send can be made idempotent or looked up, so a part in doubt is resent marked.
 */
export const teamsAdapter: PlatformAdapter<TeamsTarget> = {
  name: "teams",
  requiredEnv: ["TEAMS_APP_ID", "TEAMS_APP_PASSWORD"],
  // Teams takes about 28 KB of text per message; 25,000 characters stays clear of it.
  maxMessageChars: 25_000,
  asyncDelivery: false,
  replyTarget: _target,
  verify: _verify,
  parse: (request) => _parse(request.body),
  send: _send,
  // An image as an inline attachment Teams fetches from its signed link, another file as a card
  // with a link to it (teams_files.ts); without a link, the file's note as text.
  // The platform fetches the signed link: MEDIA's bytes are never read for it.
  filesByLink: true,
  sendFile: (target: TeamsTarget, file: OutgoingFile, caption, part, env) => {
    const activity = teamsFileActivity(file, caption, target.replyTo);
    return activity
      ? _post(target, activity, part.leaving, env)
      : _send(target, fileAsText(file, caption), part, env);
  },
  answerChoice: _answerChoice,
  typing: _typing,
  fetchMedia: fetchTeamsMedia,
};
