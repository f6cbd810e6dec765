// The chaos verdict on platform replies: which message each shown post answers, lost parts, duplicates marked or not, order; Deno.
import { RESEND_NOTE } from "../../lib/chat/mod.ts";
import { isNewPlatformWay, newPlatformChat, replyLinkOf } from "./new_platforms.ts";
import { CHAOS_MARKERS, type ChaosMessage, type ChaosSession, isPlatformWay } from "./plan.ts";
import { LABELS } from "./report.ts";
import type { Tally } from "./tally.ts";
import { discordToken } from "./ways.ts";
import type { ChaosObservation, ShownPost } from "./observation.ts";

const _GITHUB_PART = /\n\n<!-- baton:part=[A-Za-z0-9_-]{8,64} -->$/;

/** The first chaos marker in a text, if any. */
function _firstMarker(text: string): string | undefined {
  return text.match(CHAOS_MARKERS)?.[0];
}

/** A shown post as read: the note stripped (and noted), which message it answers, its units. */
interface _Post {
  post: ShownPost;
  marked: boolean;
  body: string;
  message?: ChaosMessage;
  /** What of its message's reply it shows: "echo", "L<j>" (a line of a long reply) or "notice". */
  units: string[];
}

/** How a message's reply showed twice unmarked, and when the repeat was shown (ms since the epoch). */
export interface Repeat {
  how: string;
  at: number;
}

/**
 * Attributes every post a fake platform stored to the message it answers, then counts per
 * message: answered (every line of its reply, or a failure notice), lost, duplicates (with the
 * resend note: marked; without: unmarked), and replies out of order within a session. Returns
 * the messages repeated unmarked (the replay checks read them).
 */
export function verifyPlatformReplies(
  obs: ChaosObservation,
  tally: Tally,
  turns: {
    failed: Set<string>;
    ran: Set<string>;
    /** Steers a running turn took (steer.ts): answered by that turn's reply, none of their own. */
    steered?: ReadonlySet<string>;
  },
): Map<ChaosMessage, Repeat> {
  const repeated = new Map<ChaosMessage, Repeat>();
  // What a reply names of the message it answers, where its platform links them (`replyToId`).
  const links = new Map<string, ChaosMessage>();
  for (const m of obs.sessions.flatMap((s) => s.messages)) {
    const link = replyLinkOf(m);
    if (link !== undefined) links.set(`${m.session.way} ${link}`, m);
  }
  const context = { ...turns, fakeEvents: obs.fakeEvents, links, repeated };
  const byMarker = new Map(obs.sessions.flatMap((s) => s.messages).map((m) => [m.marker, m]));
  const byToken = new Map(
    obs.sessions.filter((s) => s.way === "discord").flatMap((s) => s.messages).map((
      m,
    ) => [discordToken(m), m]),
  );
  const bySessionChat = new Map<string, ChaosSession>();
  for (const s of obs.sessions) {
    // Discord's chat is per message (its interaction token): looked up by token instead.
    if (isPlatformWay(s.way) && s.way !== "discord") bySessionChat.set(`${s.way}:${_chatOf(s)}`, s);
  }
  const posts = new Map<ChaosSession, _Post[]>();
  const questions = new Set<string>();
  // An edit (Discord's @original, a Slack preview) replaces the last one of its message: only
  // each message's last edit is shown.
  const edited = (post: ShownPost) => `${post.chat} ${post.message ?? ""}`;
  const lastEdit = new Map<string, ShownPost>();
  for (const post of obs.shown) if (post.edit) lastEdit.set(edited(post), post);
  for (const post of obs.shown) {
    if (post.edit && lastEdit.get(edited(post)) !== post) continue;
    const session = post.way === "discord"
      ? byToken.get(post.chat)?.session
      : bySessionChat.get(`${post.way}:${post.chat}`);
    if (!session) {
      tally.add(LABELS.mixed, post.way, 1, `a ${post.way} post to an unknown chat ${post.chat}`);
      continue;
    }
    const marked = post.text.startsWith(RESEND_NOTE);
    if (post.buttons?.length) {
      _checkQuestion(post, session, marked, questions, tally);
      continue;
    }
    const body = (marked ? post.text.slice(RESEND_NOTE.length) : post.text).replace(
      _GITHUB_PART,
      "",
    );
    const list = posts.get(session) ?? [];
    list.push({ post, marked, body, units: [] });
    posts.set(session, list);
  }
  for (const session of obs.sessions) {
    if (isPlatformWay(session.way)) {
      _verifySession(session, posts.get(session) ?? [], byMarker, byToken, tally, context);
    }
  }
  return repeated;
}

function _verifySession(
  session: ChaosSession,
  posts: _Post[],
  byMarker: Map<string, ChaosMessage>,
  byToken: Map<string, ChaosMessage>,
  tally: Tally,
  turns: {
    failed: Set<string>;
    ran: Set<string>;
    steered?: ReadonlySet<string>;
    fakeEvents: ChaosObservation["fakeEvents"];
    links: Map<string, ChaosMessage>;
    repeated: Map<ChaosMessage, Repeat>;
  },
): void {
  const way = session.way;
  // The message the platform's own link names (the interaction, the message replied to, the
  // thread): undefined when it names one no message has, null when the post carries no link.
  const linkOf = (post: ShownPost): ChaosMessage | undefined | null =>
    way === "discord"
      ? byToken.get(post.chat)
      : way === "telegram" && post.replyTo !== undefined
      ? session.messages[post.replyTo - 1]
      : post.replyToId !== undefined
      ? turns.links.get(`${way} ${post.replyToId}`)
      : null;
  const pending: _Post[] = [];
  for (const p of posts) {
    const markers = [...new Set([...p.body.matchAll(CHAOS_MARKERS)].map((m) => m[0]))];
    if (markers.length) {
      const message = byMarker.get(markers[0]);
      if (markers.length > 1 || !message || message.session !== session) {
        tally.add(
          LABELS.mixed,
          way,
          1,
          `${session.key} was shown ${JSON.stringify(p.body.slice(0, 60))}`,
        );
        continue;
      }
      // The platform's own link must name the same message.
      const link = linkOf(p.post);
      const linked = link === null ? message : link;
      if (linked !== message) {
        tally.add(
          LABELS.mixed,
          way,
          1,
          `${message.marker}'s reply went to ${linked?.marker ?? "no message"}`,
        );
        continue;
      }
      p.message = message;
      p.units = message.lines > 1 ? _lines(p.body, message) : ["echo"];
      continue;
    }
    // A failure notice names no message: the platform's own link says which, where there is one.
    const hinted = linkOf(p.post) ?? undefined;
    if (hinted) {
      p.message = hinted;
      p.units = ["notice"];
    } else pending.push(p);
  }
  _placeNotices(session, posts, pending, turns.failed, tally, turns.steered);

  const units = new Map<ChaosMessage, Map<string, _Post[]>>();
  const order: number[] = [];
  for (const p of posts) {
    if (!p.message) continue;
    const byUnit = units.get(p.message) ?? new Map<string, _Post[]>();
    if (!units.has(p.message)) order.push(p.message.k);
    units.set(p.message, byUnit);
    for (const unit of p.units) byUnit.set(unit, [...(byUnit.get(unit) ?? []), p]);
    if (p.marked) tally.add(LABELS.marked, way);
    if (p.message.answeredAt === undefined) p.message.answeredAt = p.post.at;
  }
  let highest = -1;
  for (const k of order) {
    if (k < highest) {
      tally.add(
        LABELS.order,
        way,
        1,
        `${session.key}: s${session.index}m${k}'s reply after s${session.index}m${highest}'s`,
      );
    }
    highest = Math.max(highest, k);
  }
  for (const message of session.messages) {
    const byUnit = units.get(message) ?? new Map<string, _Post[]>();
    // A post that repeats anything already shown is one duplicate, however many lines it repeats.
    const repeats = new Map<_Post, string>();
    for (const [unit, shown] of byUnit) {
      for (const extra of shown.slice(1)) repeats.set(extra, unit);
    }
    for (const [post, unit] of repeats) {
      if (post.marked) tally.add(LABELS.markedDuplicates, way);
      else {
        const times = byUnit.get(unit)!.length;
        if (!turns.repeated.has(message)) {
          turns.repeated.set(message, { how: `showed ${unit} ${times} times`, at: post.post.at });
        }
        tally.add(
          LABELS.unmarked,
          way,
          1,
          `${message.marker} (${way}) showed ${unit} ${times} times`,
        );
      }
    }
    const notice = byUnit.has("notice");
    const expected = message.lines > 1
      ? Array.from({ length: message.lines }, (_, j) => `L${j}`)
      : ["echo"];
    const echoed = expected.filter((u) => byUnit.has(u)).length;
    if (notice && echoed) {
      const at = Math.max(...[...byUnit.values()].flat().map((p) => p.post.at));
      turns.repeated.set(message, { how: "got both a reply and a failure notice", at });
      tally.add(
        LABELS.unmarked,
        way,
        1,
        `${message.marker} (${way}) got both a reply and a failure notice`,
      );
    }
    if (!message.accepted) {
      tally.add(LABELS.lost, way, 1, `${message.marker} (${way}) never accepted`);
    } else if (notice || echoed === expected.length) {
      tally.add(LABELS.answered, way);
      if (notice) tally.add(LABELS.failures, way);
    } else if (!echoed && turns.steered?.has(message.marker)) {
      tally.add(LABELS.answered, way); // by the reply of the turn that took it
    } else {
      const what = (echoed
        ? `${expected.length - echoed} of ${expected.length} lines missing`
        : "never answered") +
        (turns.ran.has(message.marker)
          ? turns.failed.has(message.marker)
            ? " (its turn ran, last model call failed)"
            : " (its turn ran)"
          : " (no turn ran)");
      // What the fake did with the sends that carried its text: the likeliest cause.
      const fates = (turns.fakeEvents[way] ?? []).filter((e) =>
        e.text && _firstMarker(e.text) === message.marker
      )
        .map((e) =>
          e.fate
        );
      // A failure notice carries no marker: the notices to its chat that went wrong, if any.
      const chat = way === "discord" ? discordToken(message) : _chatOf(session);
      const notices = (turns.fakeEvents[way] ?? []).filter((e) =>
        e.chat === chat && e.text?.startsWith("Sorry") && e.fate !== "ok"
      ).map((e) => `notice ${e.fate}`);
      const sends = fates.length
        ? `; sends: ${fates.join(", ")}`
        : `; no send carried its text${
          notices.length ? `; ${notices.join(", ")} in its chat` : ""
        }`;
      tally.add(LABELS.lost, way, 1, `${message.marker} (${way}) accepted, ${what}${sends}`);
    }
  }
}

/** The lines of a long reply a post shows, as "L<j>"; a line of another message makes it mixed. */
function _lines(body: string, message: ChaosMessage): string[] {
  const units: string[] = [];
  for (const line of body.split("\n")) {
    const match = /^(s\d+m\d+) L(\d+) /.exec(line);
    if (match && match[1] === message.marker) units.push(`L${match[2]}`);
  }
  return units;
}

/**
 * Places the failure notices no platform link names (Slack, GitHub, LINE, Twilio): replies come in
 * turn order, so a notice between the replies of messages a and b answers a message between them
 * that shows no reply — one whose last model call failed first, as long as the notices after it
 * there still find one each. A notice with no such message left is a duplicate; one that carries
 * the same part name as an earlier post is that post's duplicate.
 */
function _placeNotices(
  session: ChaosSession,
  posts: _Post[],
  pending: _Post[],
  failed: Set<string>,
  tally: Tally,
  steered?: ReadonlySet<string>,
): void {
  const echoed = new Set(
    posts.filter((p) => p.message && p.units[0] !== "notice").map((p) => p.message!),
  );
  const noticed = new Set<ChaosMessage>();
  const byPart = new Map<string, ChaosMessage>();
  for (const p of posts) if (p.message && p.post.part) byPart.set(p.post.part, p.message);
  for (const p of pending) {
    const index = posts.indexOf(p);
    const before = posts.slice(0, index).findLast((q) => q.message)?.message?.k ?? -1;
    const after = posts.slice(index + 1).find((q) =>
      q.message && q.units[0] !== "notice"
    )?.message?.k ??
      Infinity;
    const known = p.post.part ? byPart.get(p.post.part) : undefined;
    const open = session.messages.filter((m) =>
      m.k > before && m.k < after && m.accepted && !echoed.has(m) && !noticed.has(m) &&
      !steered?.has(m.marker)
    );
    // Notices still to place before the next reply answer later messages, in order: this one may
    // take only a message that leaves one for each of them. (A turn can time out after its last
    // model call answered, so "failed" alone does not say which of two open messages it was.)
    const next = posts.findIndex((q, i) => i > index && q.message && q.units[0] !== "notice");
    const later = pending.filter((q) => {
      const at = posts.indexOf(q);
      return at > index && (next < 0 || at < next) && !(q.post.part && byPart.has(q.post.part));
    }).length;
    const candidates = open.slice(0, Math.max(1, open.length - later));
    const chosen = known ?? candidates.find((m) => failed.has(m.marker)) ?? candidates[0] ??
      posts.slice(0, index).findLast((q) => q.message && q.units[0] === "notice")?.message;
    if (!chosen) {
      tally.add(
        LABELS.unmarked,
        session.way,
        1,
        `${session.key}: a notice answering no message: ${p.body.slice(0, 60)}`,
      );
      continue;
    }
    p.message = chosen;
    p.units = ["notice"];
    noticed.add(chosen);
    if (p.post.part) byPart.set(p.post.part, chosen);
  }
}

/** A session's chat as the fakes name it (`ShownPost.chat`); Discord's is per message. */
function _chatOf(session: ChaosSession): string {
  if (session.way === "slack") {
    return session.slackKind === "dm" ? session.channel : `${session.channel}/${session.threadTs}`;
  }
  if (isNewPlatformWay(session.way)) return newPlatformChat(session);
  return String(session.chatId);
}

/**
 * An approval question (a post with buttons) is no reply: it must name a message of its own
 * session, and the same question (its buttons' data) shows twice only behind the resend note.
 */
function _checkQuestion(
  post: ShownPost,
  session: ChaosSession,
  marked: boolean,
  seen: Set<string>,
  tally: Tally,
): void {
  const token = /\bq(\d+)x\d+\b/.exec(post.text);
  if (!token || Number(token[1]) !== session.index) {
    tally.add(LABELS.mixed, post.way, 1, `${session.key} was asked ${post.text.slice(0, 60)}`);
  }
  const question = `${post.chat} ${post.buttons![0]}`;
  if (seen.has(question) && !marked) {
    tally.add(LABELS.unmarked, post.way, 1, `${session.key}: a question shown twice`);
  }
  seen.add(question);
}
