// The webhook routes' access check: after the signature, before anything is stored — allowlists, pairing codes, /pair, per-user quotas; Workers.
import type { Context } from "hono";
import {
  accessVerdict,
  refusalFor,
  type Sender,
  senderEntry,
} from "../lib/access/access_policy.ts";
import {
  GITHUB_REFUSAL_TEXT,
  PAIR_TEXTS,
  PAIRING_PENDING_TEXT,
  pairingText,
  parsePairCommand,
  PRIVATE_TEXT,
  quotaText,
} from "../lib/access/access_notices.ts";
import type { AdmitResult } from "../lib/access/sender_record.ts";
import { normalizePairingCode } from "../lib/access/sender_record.ts";
import type { PlatformAdapter, PlatformEnv, PlatformMessage } from "../lib/platform.ts";
import { replyChannel } from "../lib/reply_channel.ts";
import { PLATFORM_ADAPTERS } from "../lib/platforms/mod.ts";
import { parseCommand } from "../lib/session_commands.ts";
import { accessStub, approvePairingCode, directoryStub, senderStub } from "./access_client.ts";
import { type App, webhookAnswer } from "./_http.ts";
import { log } from "../lib/log.ts";

const _HOUR_MS = 60 * 60 * 1000;

/**
 * Decides whether a verified platform message may go on to its session. Null: store it and start
 * its turn as usual. A response: answer the delivery with it — nothing was stored but, for an
 * unknown direct sender, their pairing request. Senders the settings list cost no I/O (unless a
 * quota counts them); anyone else costs one call to their own record's object.
 */
export async function gateMessage(
  c: Context<App>,
  adapter: PlatformAdapter,
  message: PlatformMessage,
): Promise<Response | null> {
  const { access } = c.var.config;
  const sender: Sender = { platform: adapter.name, ...message.sender };
  const verdict = accessVerdict(access, sender);
  const isAdmin = verdict.kind === "allowed" && verdict.admin;
  const pair = parsePairCommand(message.text);
  const counts = !isAdmin && access.userTurnsPerHour !== null && !parseCommand(message.text);
  if (verdict.kind === "allowed" && !pair && !counts) return null;

  const notices = _notices(c, adapter, message);
  if (verdict.kind === "unlisted" && sender.platform === "github") {
    return await _refuseGithub(c, message, notices);
  }
  let result: AdmitResult = { kind: "admitted" };
  const record = senderStub(c.env, sender);
  if (verdict.kind === "unlisted" || counts) {
    result = await record.admit({
      needsPairing: verdict.kind === "unlisted",
      refusal: refusalFor(access, sender),
      name: sender.name,
      // A `/pair` is answered, never a turn: it does not count.
      quota: counts && !pair ? { limit: access.userTurnsPerHour!, windowMs: _HOUR_MS } : null,
      deliveryKey: message.deliveryKey,
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
    const sent = await notices.send(text, result.notify, "sender not allowed", true);
    if (!sent.delivered) await record.noticeFailed("refusal");
    return sent.response;
  }
  if (result.kind === "over_quota") {
    const text = quotaText(access.userTurnsPerHour!, result.retryAfterMs);
    const sent = await notices.send(text, result.notify, "over quota", true);
    if (!sent.delivered) await record.noticeFailed("quota");
    return sent.response;
  }
  if (!pair) return null;
  const answer = isAdmin ? await _pair(c, pair.argument, senderEntry(sender)) : PAIR_TEXTS.notAdmin;
  return (await notices.send(answer, true, "pair command")).response;
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
  const sent = await notices.send(GITHUB_REFUSAL_TEXT, notify, "sender not allowed");
  if (!sent.delivered) await throttle.noticeFailed("refusal");
  return sent.response;
}

interface _Notices {
  /** Acknowledges the delivery without a turn, naming why for the platform's delivery log. */
  ack(reason: string): Response;
  /**
   * Answers the sender with `text` when `due` (or always, where the platform wants an answer to
   * every delivery) and acknowledges. `perChat`: an access notice, which a group chat gets once
   * per `GROUP_NOTICE_MS` whoever it is for. `delivered` is false when a due notice was not sent
   * (it failed, or the group had one within the period): the sender's record lets a later
   * message try again, so each member is told in turn.
   */
  send(
    text: string,
    due: boolean,
    reason: string,
    perChat?: boolean,
  ): Promise<{ response: Response; delivered: boolean }>;
}

function _notices(c: Context<App>, adapter: PlatformAdapter, message: PlatformMessage): _Notices {
  // Where the platform wants its own acknowledgement (Twilio's TwiML), every refusal gives it.
  const own = adapter.acknowledgement;
  const ack = (reason: string) =>
    own ? webhookAnswer(c, own) : c.json({ ok: true, ignored: reason });
  return {
    ack,
    async send(text, due, reason, perChat = false) {
      if (adapter.inlineNotice) {
        // Discord: every command needs an answer, and an ephemeral one is the sender's alone.
        const inline = adapter.inlineNotice(text);
        return { response: c.json(inline.body, inline.status as 200), delivered: true };
      }
      if (!due) return { response: ack(reason), delivered: true };
      // Asked only once the sender's own throttle says a notice is due: one call more, then.
      const group = perChat && !message.sender.direct
        ? accessStub(c.env, `notice:${message.sessionKey}`)
        : null;
      if (group && !(await group.groupNoticeDue())) {
        return { response: ack(reason), delivered: false };
      }
      // Sent before the acknowledgement, not after: nothing outlives the request that owns it.
      const channel = replyChannel(PLATFORM_ADAPTERS, c.env as unknown as PlatformEnv);
      const result = await channel.send(message.reply, text, { index: 0, count: 1 });
      if (!result.ok) {
        log.warn("access: a notice was not delivered", { error: result.message });
        await group?.noticeFailed("group");
      }
      return { response: ack(reason), delivered: result.ok };
    },
  };
}
