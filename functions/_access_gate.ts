// The webhook routes' access check: after the signature, before anything is stored — allowlists, pairing codes, /pair, per-user quotas; Workers.
import type { Context } from "hono";
import { accessVerdict, refusalFor, senderEntry } from "../lib/access/access_policy.ts";
import {
  GITHUB_REFUSAL_TEXT,
  PAIR_TEXTS,
  PAIRING_PENDING_TEXT,
  pairingText,
  PRIVATE_TEXT,
  quotaText,
} from "../lib/access/access_notices.ts";
import { type AdmitResult, normalizePairingCode } from "../lib/access/sender_record.ts";
import { memoryCommandOf } from "../lib/access/user_memory.ts";
import { budgetText, utcDay } from "../lib/access/token_budget.ts";
import { usageText } from "../lib/chat/usage_text.ts";
import { sessionStub } from "./session_client.ts";
import type { NoticeKind, NoticeUndo } from "../lib/access/notice_outbox.ts";
import { parseCommand, type PlatformAdapter, type PlatformMessage } from "../lib/chat/mod.ts";
import type { Admission, ChatEvent } from "../lib/platforms/chat_inbound.ts";
import { accessStub, approvePairingCode, directoryStub, senderStub } from "./access_client.ts";
import { type App, jsonError, webhookAnswer } from "./_http.ts";
import { errorText, log } from "../lib/runtime/mod.ts";

const _HOUR_MS = 60 * 60 * 1000;

/**
 * Decides, once, whether a verified event may go on to its session. An `Admission`: store it and
 * start its turn as usual, the verdict (the sender's admin standing, the command parsed here)
 * carried with it (`chatInbound`). A response: answer the delivery with it — nothing was stored
 * but, for an unknown direct sender, their pairing request. Senders the settings list cost no I/O
 * (unless a quota counts them, or it is `/memory` or `/forget`); anyone else costs one call to their own record's object.
 */
export async function gateMessage(
  c: Context<App>,
  adapter: PlatformAdapter,
  event: ChatEvent,
): Promise<Response | Admission> {
  const { access } = c.var.config;
  const { sender } = event;
  const verdict = accessVerdict(access, sender);
  const isAdmin = verdict.kind === "allowed" && verdict.admin;
  const command = parseCommand(event.text);
  const admitted: Admission = { admin: isAdmin, command };
  // The generic webhook (no reply target) answers to its signature: no quota counts it, and a
  // refusal is the delivery's own 403.
  if (!event.reply) {
    if (verdict.kind === "allowed") return admitted;
    return jsonError(c, 403, "user: not in ALLOWED_USERS for the generic webhook", "access_denied");
  }
  const message: PlatformMessage = { ...event, reply: event.reply };
  const pair = command?.word === "pair" ? command : null;
  // `/memory`, `/forget [all|N]` in a direct chat: answered here from the sender's own record
  // (a session's commands are answered inside a transaction, which cannot ask another object).
  const memory = c.var.config.memory.on && sender.direct ? memoryCommandOf(command) : null;
  // `/usage`: answered here too, from this chat's session and the sender's own record.
  const usage = command?.command === "usage";
  // A `/steer TEXT` carries a message for the model (its own turn when none runs): it counts.
  const answered = command !== null && command.command !== "steer";
  const counts = !isAdmin && access.userTurnsPerHour !== null && !answered;
  // USER_TOKENS_PER_DAY: every turn reserves from its sender's day, admins' too (a money cap);
  // a `/steer` too (a turn of its own when none runs; steered into one, it frees its reservation).
  const tokenCap = c.var.config.spend.userTokensPerDay;
  const spends = tokenCap !== null && !answered;
  if (verdict.kind === "allowed" && !pair && !memory && !usage && !counts && !spends) {
    return _withSpend(admitted, event, command, false);
  }

  const notices = _notices(c, adapter, message);
  if (verdict.kind === "unlisted" && sender.platform === "github") {
    return await _refuseGithub(c, message, notices);
  }
  let result: AdmitResult = { kind: "admitted" };
  const record = senderStub(c.env, sender);
  if (verdict.kind === "unlisted" || counts || spends) {
    result = await record.admit({
      needsPairing: verdict.kind === "unlisted",
      refusal: refusalFor(access, sender),
      name: sender.name,
      // A `/pair` is answered, never a turn: it does not count.
      quota: counts && !pair ? { limit: access.userTurnsPerHour!, windowMs: _HOUR_MS } : null,
      deliveryKey: message.deliveryKey,
      tokens: spends ? { limit: tokenCap!, estimate: c.var.config.spend.turnReserve } : null,
      now: Date.now(),
    });
  }
  if (result.kind === "refused") {
    if (result.notify && result.pairing) {
      // Listed for the owner before the code goes out: a code the owner cannot find is useless.
      const registered = await directoryStub(c.env).registerPairing(
        {
          code: result.pairing.code,
          platform: sender.platform,
          user: sender.user,
          name: sender.name,
        },
        result.pairing.firstAt,
        result.pairing.expiresAt,
        access.maxPendingPairings,
      );
      // Full: no code, and the record keeps this try as the hour's one (no retry per message).
      if (registered === "full") return notices.ack("too many pairing requests pending");
      if (!registered) {
        await record.noticeFailed("refusal");
        return notices.ack("sender not allowed");
      }
    }
    const text = result.pairing
      ? (result.notify ? pairingText(result.pairing.code) : PAIRING_PENDING_TEXT)
      : PRIVATE_TEXT;
    const sent = await notices.send(text, result.notify, "sender not allowed", {
      to: record,
      undo: "refusal",
      perChat: true,
    });
    if (!sent.delivered) await record.noticeFailed("refusal");
    return sent.response;
  }
  if (result.kind === "over_quota") {
    const text = quotaText(access.userTurnsPerHour!, result.retryAfterMs);
    const sent = await notices.send(text, result.notify, "over quota", {
      to: record,
      undo: "quota",
      perChat: true,
    });
    if (!sent.delivered) await record.noticeFailed("quota");
    return sent.response;
  }
  if (result.kind === "over_budget") {
    const text = budgetText(tokenCap!, result.resetAt, Date.now());
    const sent = await notices.send(text, result.notify, "over token budget", {
      to: record,
      undo: "budget",
      perChat: true,
    });
    if (!sent.delivered) await record.noticeFailed("budget");
    return sent.response;
  }
  if (usage) {
    const answer = await _usageAnswer(c, message);
    return (await notices.send(answer, true, "usage command", { to: record })).response;
  }
  if (memory) {
    // Applied once per delivery: a redelivered `/forget 2` gets its first answer back.
    const answer = await record.memoryCommand(memory, message.deliveryKey);
    return (await notices.send(answer, true, "memory command", { to: record })).response;
  }
  if (!pair) return _withSpend(admitted, event, command, spends);
  const answer = isAdmin ? await _pair(c, pair.argument, senderEntry(sender)) : PAIR_TEXTS.notAdmin;
  return (await notices.send(answer, true, "pair command", { to: record })).response;
}

/**
 * The admission of a message that may start a turn, naming its sender's record: the session
 * settles the turn's tokens there once stored (the reservation, where USER_TOKENS_PER_DAY took
 * one; else the day's sums, kept whether or not a cap is set) — after the turn, never on its path.
 */
function _withSpend(
  admitted: Admission,
  event: ChatEvent,
  command: Admission["command"],
  reserved: boolean,
): Admission {
  if (command && command.command !== "steer") return admitted; // answered, never a model turn
  const record = `sender:${senderEntry(event.sender)}`;
  return { ...admitted, spend: { record, key: event.deliveryKey, reserved } };
}

/** The reply to `/usage`: this chat's and its sender's tokens today and yesterday (UTC). */
async function _usageAnswer(c: Context<App>, message: PlatformMessage): Promise<string> {
  const now = Date.now();
  const days = [utcDay(now), utcDay(now - 86_400_000)];
  const record = senderStub(c.env, message.sender);
  const [session, today, yesterday] = await Promise.all([
    sessionStub(c.env, message.sessionKey).usage(days, { session_key: message.sessionKey }),
    record.tokenUsage(days[0]),
    record.tokenUsage(days[1]),
  ]);
  const { spend } = c.var.config;
  return usageText({
    session: [session[0], session[1]],
    user: [today, yesterday],
    priced: spend.modelPrices !== null,
    userCap: spend.userTokensPerDay,
  });
}

async function _pair(c: Context<App>, argument: string, by: string): Promise<string> {
  if (!argument) return PAIR_TEXTS.usage;
  const code = normalizePairingCode(argument);
  if (!code) return PAIR_TEXTS.notFound;
  const approval = await approvePairingCode(c.env, code, by);
  if (approval.kind === "not_found") return PAIR_TEXTS.notFound;
  const who = `${approval.user.platform}:${approval.user.user}` +
    (approval.user.name && approval.user.name !== approval.user.user
      ? ` (${approval.user.name})`
      : "");
  return approval.kind === "approved" ? PAIR_TEXTS.approved(who) : PAIR_TEXTS.already(who);
}

// GitHub has no private channel: an unknown author gets silence, or one comment per issue.
async function _refuseGithub(
  c: Context<App>,
  message: PlatformMessage,
  notices: _Notices,
): Promise<Response> {
  if (!c.var.config.access.githubRefusalComment) return notices.ack("sender not allowed");
  const throttle = accessStub(c.env, `notice:${message.sessionKey}`);
  const result = await throttle.admit({
    needsPairing: true,
    refusal: "comment",
    name: "",
    quota: null,
    deliveryKey: message.deliveryKey,
    now: Date.now(),
  });
  const notify = result.kind === "refused" && result.notify;
  const sent = await notices.send(GITHUB_REFUSAL_TEXT, notify, "sender not allowed", {
    to: throttle,
    undo: "refusal",
  });
  if (!sent.delivered) await throttle.noticeFailed("refusal");
  return sent.response;
}

interface _Notices {
  /** Acknowledges the delivery without a turn, naming why for the platform's delivery log. */
  ack(reason: string): Response;
  /**
   * Answers the sender with `text` when `due` (or always, where the platform wants an answer to
   * every delivery) and acknowledges. The notice is stored in the access object `to` (the
   * sender's record, a chat's throttle), which sends it as a session sends its notices — once,
   * 429s waited out, a send cut off resolved after a restart — and takes back the `undo` throttle
   * should it be given up. `perChat`: an access notice, which a group chat gets once per
   * `GROUP_NOTICE_MS` whoever it is for. `delivered` is false when a due notice was not stored
   * (the group had one within the period, or the store failed): the caller then takes back its
   * own throttle, so a later message tries again and each member is told in turn.
   */
  send(
    text: string,
    due: boolean,
    reason: string,
    how: { to: _NoticeHolder; undo?: NoticeKind; perChat?: boolean },
  ): Promise<{ response: Response; delivered: boolean }>;
}

/** An access object that keeps and sends notices (a stub of AccessDO). */
interface _NoticeHolder {
  queueNotice(target: PlatformMessage["reply"], text: string, undo: NoticeUndo[]): Promise<void>;
}

function _notices(c: Context<App>, adapter: PlatformAdapter, message: PlatformMessage): _Notices {
  // Where the platform wants its own acknowledgement (Twilio's TwiML), every refusal gives it.
  const own = adapter.acknowledgement;
  const ack = (reason: string) =>
    own ? webhookAnswer(c, own) : c.json({ ok: true, ignored: reason });
  return {
    ack,
    async send(text, due, reason, { to, undo, perChat = false }) {
      if (adapter.inlineNotice) {
        // Discord: every command needs an answer, and an ephemeral one is the sender's alone.
        const inline = adapter.inlineNotice(text);
        return { response: c.json(inline.body, inline.status as 200), delivered: true };
      }
      if (!due) return { response: ack(reason), delivered: true };
      // Asked only once the sender's own throttle says a notice is due: one call more, then.
      const chat = perChat && !message.sender.direct ? `notice:${message.sessionKey}` : null;
      const group = chat ? accessStub(c.env, chat) : null;
      if (group && !(await group.groupNoticeDue())) {
        return { response: ack(reason), delivered: false };
      }
      const undos: NoticeUndo[] = [
        ...(undo ? [{ kind: undo }] : []),
        ...(chat ? [{ kind: "group" as const, object: chat }] : []),
      ];
      // Stored before the acknowledgement; the object sends it, the one send path of the outbox.
      try {
        await to.queueNotice(message.reply, text, undos);
      } catch (error) {
        log.warn("access: a notice was not stored", { error: errorText(error) });
        await group?.noticeFailed("group");
        return { response: ack(reason), delivered: false };
      }
      return { response: ack(reason), delivered: true };
    },
  };
}
