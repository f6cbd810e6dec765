// Checks of the chaos run's checks (the developer lane, `npm test`): the verifier given observations built by hand must flag what it exists to flag; Deno.
import { assert, assertEquals } from "@std/assert";
import { RESEND_NOTE } from "../lib/chat/mod.ts";
import { IMAGES_NOT_SENT } from "../lib/agent/reply_images.ts";
import { telegramAdapter } from "../lib/platforms/telegram.ts";
import { startChaosServer } from "../scripts/chaos/fake_server.ts";
import {
  type ChaosMessage,
  type ChaosObservation,
  type ChaosWay,
  figure,
  fileBytes,
  FILES_OUT_LABELS,
  filesRoute,
  FLOOD_LABELS,
  floodStep,
  judgeRss,
  LABELS,
  MEDIA_LABELS,
  newPlatformChat,
  noFaults,
  observeMedia,
  photoBytes,
  planChaos,
  planFilesOut,
  planFlood,
  planMedia,
  REPLAY_LABELS,
  replyLinkOf,
  seededRandom,
  type ShownPost,
  verifyChaos,
} from "../scripts/chaos/mod.ts";

/**
 * What the verifier is given for one session of `way` whose `count` messages were accepted and
 * answered by `posts` (built from the messages, in the platform's own shape).
 */
function observed(
  way: ChaosWay,
  posts: (m: ChaosMessage[]) => Omit<ShownPost, "at">[],
  count = 2,
): ChaosObservation {
  const plan = { seed: 3, messages: count, sessions: 1, spanMs: 1_000, longRate: 0, ways: [way] };
  const sessions = planChaos({ ...plan, duplicateRate: 0, badRate: 0 }, seededRandom(3));
  const messages = sessions[0].messages;
  for (const m of messages) m.accepted = true;
  return {
    seed: 3,
    ways: [way],
    sessions,
    modelRequests: [],
    modelAnswered: [],
    injectedModel: { r429: 0, r500: 0, stall: 0 },
    shown: posts(messages).map((p, i) => ({ ...p, at: i })),
    faults: { [way]: noFaults() } as ChaosObservation["faults"],
    lookups: { [way]: 0 } as ChaosObservation["lookups"],
    fakeEvents: {},
    transcripts: new Map(),
    locked: new Set(),
    late: new Map(),
    counts: {
      [way]: { sent: 2, duplicatesSent: 0, badSent: 0, bad5xx: 0, good5xx: 0 },
    } as ChaosObservation["counts"],
    jobs: [],
    kills: [],
    openAtKills: 0,
    held: [],
    problems: [],
    seconds: 0,
  };
}

/** A post answering `m` on its platform (its echo, unless `text` says otherwise), linked where the platform links. */
function reply(m: ChaosMessage, text = m.text): Omit<ShownPost, "at"> {
  return {
    way: m.session.way as ShownPost["way"],
    chat: newPlatformChat(m.session),
    text,
    replyToId: replyLinkOf(m),
  };
}

Deno.test("verifyChaos() flags a WhatsApp reply shown twice unmarked, a Teams reply linked to another message and a bad token let through", () => {
  // Each message's echo once, quoting its own message: nothing to flag.
  const clean = verifyChaos(observed("whatsapp", (ms) => ms.map((m) => reply(m))));
  assert(clean.ok, clean.problems.join("\n"));
  assertEquals(figure(clean, LABELS.answered), 2);
  // The first reply again, as a second message without the note: an unmarked duplicate.
  const twice = verifyChaos(observed("whatsapp", ([a, b]) => [reply(a), reply(a), reply(b)]));
  assertEquals(figure(twice, LABELS.unmarked), 1, twice.problems.join("\n"));
  assert(!twice.ok);
  // The same repeat behind the resend note is counted, not failed.
  const marked = verifyChaos(
    observed("whatsapp", ([a, b]) => [reply(a), reply(a, RESEND_NOTE + a.text), reply(b)]),
  );
  assertEquals(figure(marked, LABELS.markedDuplicates), 1, marked.problems.join("\n"));
  assert(marked.ok, marked.problems.join("\n"));
  // A Teams reply to the second message that answers the first: mixed.
  const crossed = verifyChaos(
    observed("teams", ([a, b]) => [reply(a), { ...reply(b), replyToId: replyLinkOf(a) }]),
  );
  assert(figure(crossed, LABELS.mixed) >= 1, crossed.problems.join("\n"));
  assert(!crossed.ok);
  // A Google Chat delivery with a forged token answered 200.
  const lax = observed("google-chat", (ms) => ms.map((m) => reply(m)));
  lax.sessions[0].queue.push({
    session: lax.sessions[0],
    marker: "bad9",
    what: "bad signature",
    at: 0,
    status: 200,
  });
  const forged = verifyChaos(lax);
  assertEquals(figure(forged, LABELS.badRefusal), 1, forged.problems.join("\n"));
  assert(!forged.ok);
});

Deno.test("verifyChaos() places two failure notices in a row in turn order, whichever turn's last model call failed", () => {
  // Seed 31's LINE session s5: m1's turn timed out after its last model call answered, m2's last
  // call failed; their two notices came in turn order between m0's and m3's replies.
  const notice = "Sorry, I could not answer that: the turn timed out.";
  const obs = observed("line", ([a, b, c, d]) => [
    reply(a),
    reply(b, notice),
    reply(c, notice),
    reply(d),
  ], 4);
  const [, b, c] = obs.sessions[0].messages;
  for (const [m, answered] of [[b, false], [b, true], [c, false]] as const) {
    const body = { messages: [{ role: "user", content: m.text }] };
    obs.modelRequests.push({ body, headers: new Headers(), lastUserText: m.text, sessionTag: "" });
    obs.modelAnswered.push(answered);
  }
  const report = verifyChaos(obs);
  assert(report.ok, report.problems.join("\n"));
  assertEquals(figure(report, LABELS.failures), 2);
});

Deno.test("verifyChaos() flags a reply a replay repeated, and a minute of a flooding tenant's turns past its quota", () => {
  // The first message replayed after its reply: shown once, nothing to flag.
  const once = observed("whatsapp", (ms) => ms.map((m) => reply(m)));
  once.replays = [{ message: once.sessions[0].messages[0], at: 0, n: 1, sentAt: 1, status: 200 }];
  const clean = verifyChaos(once);
  assert(clean.ok, clean.problems.join("\n"));
  assertEquals(figure(clean, REPLAY_LABELS.sent), 1);
  // Its reply shown again after the replay, without the note: the replay ran it a second time.
  const again = observed("whatsapp", ([a, b]) => [reply(a), reply(b), reply(a)]);
  again.replays = [{ message: again.sessions[0].messages[0], at: 0, n: 1, sentAt: 1, status: 200 }];
  const repeated = verifyChaos(again);
  assertEquals(figure(repeated, REPLAY_LABELS.repeated), 1, repeated.problems.join("\n"));
  assert(!repeated.ok);
  // The same repeat shown before the replay went out is no replay's (an unmarked duplicate still).
  again.replays[0].sentAt = 5;
  const before = verifyChaos(again);
  assertEquals(figure(before, REPLAY_LABELS.repeated), 0, before.problems.join("\n"));
  assertEquals(figure(before, LABELS.unmarked), 1);

  // A flood whose quota is 10: the model sees 10 turns, then (a retry of the 10th aside) an 11th
  // within the minute — one turn beyond — and a 12th a minute after the first, which is not.
  const obs = observed("whatsapp", (ms) => ms.map((m) => reply(m)));
  obs.ways = [...obs.ways, "runs"];
  obs.counts.runs = { sent: 0, duplicatesSent: 0, badSent: 0, bad5xx: 0, good5xx: 0 };
  const flood = planFlood({ seed: 3, sessions: [], jobs: 0, spanMs: 1_000 }, seededRandom(3));
  assertEquals(flood.quota, 10);
  const turn = (history: number) => ({
    body: {
      messages: Array.from({ length: history }, (_, i) => [
        { role: "user", content: "[tag:f0] flood-run" },
        { role: "assistant", content: `flood reply f0 t${i}` },
      ]).flat().concat([{ role: "user", content: "[tag:f0] flood-run" }]),
    },
    headers: new Headers(),
    lastUserText: "[tag:f0] flood-run",
    sessionTag: "f0",
  });
  for (let i = 0; i < 10; i++) floodStep(flood, turn(i));
  floodStep(flood, turn(9));
  assertEquals(flood.turns.size, 10);
  obs.flood = flood;
  const within = verifyChaos(obs);
  assert(within.ok, within.problems.join("\n"));
  floodStep(flood, turn(10));
  const beyond = verifyChaos(obs);
  assertEquals(figure(beyond, FLOOD_LABELS.beyond), 1, beyond.problems.join("\n"));
  assert(!beyond.ok);
  const first = [...flood.turns.values()][0];
  for (const t of flood.turns.values()) t.at = first.at;
  [...flood.turns.values()][10].at = first.at + 60_000;
  assert(verifyChaos(obs).ok);
});

Deno.test("judgeRss() judges starts at the same age and settled starts, not the fill after each start", () => {
  // Each start fills from 200 to 250 MiB over its two minutes: no leak, every judged row passes.
  const kills = [120_000, 240_000];
  const fill = (at: number) => {
    const from = Math.max(0, ...kills.filter((k) => k <= at));
    return { at, rssKiB: (200 + 50 * Math.min(1, (at - from) / 120_000)) * 1024 };
  };
  const samples = Array.from({ length: 70 }, (_, i) => fill(i * 5_000));
  const flat = judgeRss(samples, kills);
  assert(
    flat.some((r) => r.judged) && flat.every((r) => !r.judged || r.growth <= 10),
    `${JSON.stringify(flat)}`,
  );
  // The same, but every start begins 30 % higher than the one before: a leak across restarts.
  const leak = judgeRss(
    samples.map((s) => ({ ...s, rssKiB: s.rssKiB * 1.3 ** kills.filter((k) => k <= s.at).length })),
    kills,
  );
  assert(leak.some((r) => r.judged && r.growth > 10), JSON.stringify(leak));
  // One start of six minutes still growing at its end fails; one that settled passes.
  const long = (grow: boolean) =>
    judgeRss(
      Array.from(
        { length: 72 },
        (_, i) => ({ at: i * 5_000, rssKiB: (200 + (grow ? i * 2 : Math.min(i, 40) * 2)) * 1024 }),
      ),
      [],
    );
  assert(long(true).some((r) => r.judged && r.growth > 10));
  assert(long(false).every((r) => !r.judged || r.growth <= 10));
});

Deno.test("verifyChaos() flags a photo answered without the model seeing it or a notice, and a model call carrying another message's photo", () => {
  // Telegram's replies quote their message by its id (its place in the session, from 1).
  const obs = observed("telegram", (ms) =>
    ms.map((m) => ({
      way: "telegram" as const,
      chat: String(m.session.chatId),
      text: m.text,
      replyTo: m.k + 1,
    })));
  const [a, b] = obs.sessions[0].messages;
  obs.media = planMedia(obs.sessions, 1, seededRandom(3));
  assertEquals(obs.media.photos.size, 2);
  const call = (m: ChaosMessage, photo: string) => {
    const url = `data:image/png;base64,${btoa(String.fromCharCode(...photoBytes(photo)))}`;
    const content = [{ type: "text", text: m.text }, { type: "image_url", image_url: { url } }];
    observeMedia(obs.media!, {
      body: { messages: [{ role: "user", content }] },
      headers: new Headers(),
      lastUserText: m.text,
      sessionTag: "s0",
    });
  };
  // a's turn saw its own photo; b's saw none and its reply said nothing of it.
  call(a, a.marker);
  const unseen = verifyChaos(obs);
  assertEquals(figure(unseen, MEDIA_LABELS.unseen), 1, unseen.problems.join("\n"));
  assert(!unseen.ok);
  // b's reply led by the notice: said unread, nothing to flag.
  obs.shown[1].text = `I couldn't read the photo (download failed: 500).\n\n${b.text}`;
  const said = verifyChaos(obs);
  assert(said.ok, said.problems.join("\n"));
  // A model call for b carrying a's photo: another message's image.
  call(b, a.marker);
  const crossed = verifyChaos(obs);
  assertEquals(figure(crossed, MEDIA_LABELS.wrong), 1, crossed.problems.join("\n"));
  assert(!crossed.ok);
});

Deno.test("filesRoute() records the sendPhoto upload baton's Telegram adapter makes: chat, message by bytes, resend note", async () => {
  const sessions = planChaos(
    {
      seed: 3,
      messages: 2,
      sessions: 1,
      spanMs: 1_000,
      longRate: 0,
      duplicateRate: 0,
      badRate: 0,
      ways: ["telegram"],
    },
    seededRandom(3),
  );
  const files = planFilesOut(sessions, 1, seededRandom(3));
  const token = "424242:chaos-bot-token";
  const server = await startChaosServer({
    rates: { rate429: 0, rate5xx: 0 },
    random: seededRandom(3),
    isSend: () => true,
    chatOf: (call) => String(call.body?.chat_id),
    faultAnswer: (status) => ({ status, body: { ok: false } }),
    route: (call) => filesRoute(files, token)(call) ?? { status: 404, body: { ok: false } },
  });
  try {
    const env = { TELEGRAM_BOT_TOKEN: token, TELEGRAM_API_ROOT: server.url };
    const [a] = sessions[0].messages;
    const bytes = fileBytes(a.marker);
    const file = { id: "s/x", type: "image/png", size: bytes.length, bytes, url: null };
    const target = { platform: "telegram" as const, chat_id: a.session.chatId, message_id: 1 };
    const part = { index: 0, count: 2, marker: "o1-x" };
    assertEquals(await telegramAdapter.sendFile!(target, file, "", part, env), { ok: true });
    assertEquals(
      await telegramAdapter.sendFile!(target, file, RESEND_NOTE, part, env),
      { ok: true },
    );
    assertEquals(
      files.sent.map(({ at: _at, ...f }) => f),
      [false, true].map((marked) => ({
        chat: String(a.session.chatId),
        method: "sendPhoto",
        marker: a.marker,
        exact: true,
        marked,
      })),
    );
  } finally {
    await server.close();
  }
});

Deno.test("verifyChaos() flags a file sent twice unmarked, a file lost and a file sent to another chat", () => {
  const obs = observed("telegram", (ms) =>
    ms.map((m) => ({
      way: "telegram" as const,
      chat: String(m.session.chatId),
      text: m.text,
    })));
  const [a, b] = obs.sessions[0].messages;
  const chat = String(a.session.chatId);
  obs.filesOut = planFilesOut(obs.sessions, 1, seededRandom(3));
  const sent = (marker: string, marked = false, to = chat) => ({
    chat: to,
    method: "sendPhoto",
    marker,
    exact: true,
    marked,
    at: 0,
  });
  // Each reply's file once in its chat, then a's again behind the note: nothing to flag.
  obs.filesOut.sent = [sent(a.marker), sent(b.marker), sent(a.marker, true)];
  const clean = verifyChaos(obs);
  assert(clean.ok, clean.problems.join("\n"));
  assertEquals(figure(clean, FILES_OUT_LABELS.files), 2);
  // a's file again without the note: sent twice.
  obs.filesOut.sent = [sent(a.marker), sent(b.marker), sent(a.marker)];
  const twice = verifyChaos(obs);
  assertEquals(figure(twice, FILES_OUT_LABELS.twice), 1, twice.problems.join("\n"));
  assert(!twice.ok);
  // b's reply shown, its file never: lost — unless its reply says the image was not sent.
  obs.filesOut.sent = [sent(a.marker)];
  const lost = verifyChaos(obs);
  assertEquals(figure(lost, FILES_OUT_LABELS.lost), 1, lost.problems.join("\n"));
  assert(!lost.ok);
  obs.shown[1].text = `${b.text}\n\n${IMAGES_NOT_SENT}image-1.png: too big.)`;
  const said = verifyChaos(obs);
  assert(said.ok, said.problems.join("\n"));
  // b's file in another chat: elsewhere (and lost from its own).
  obs.filesOut.sent = [sent(a.marker), sent(b.marker, false, "999")];
  const elsewhere = verifyChaos(obs);
  assertEquals(figure(elsewhere, FILES_OUT_LABELS.elsewhere), 1, elsewhere.problems.join("\n"));
  assert(!elsewhere.ok);
});
