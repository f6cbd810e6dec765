// The chaos run's reduced mode inside `npm test`: every way in, faulty fakes, seeded SIGKILLs; a fixed seed and a random one; checks of the checks; Deno.
import { assert, assertEquals } from "@std/assert";
import { RESEND_NOTE } from "../lib/platform.ts";
import { APPROVAL_LABELS } from "../scripts/_chaos_approvals.ts";
import type { ShownPost } from "../scripts/_chaos_fakes.ts";
import { newPlatformChat, replyLinkOf } from "../scripts/_chaos_new_platforms.ts";
import { JOB_LABELS } from "../scripts/_chaos_jobs.ts";
import {
  type ChaosMessage,
  type ChaosWay,
  planChaos,
  seededRandom,
} from "../scripts/_chaos_plan.ts";
import { formatChaosReport, runChaos } from "../scripts/_chaos_run.ts";
import { type ChaosReport, figure, LABELS } from "../scripts/_chaos_report.ts";
import { judgeRss } from "../scripts/_chaos_soak.ts";
import type { ChaosObservation } from "../scripts/_chaos_tally.ts";
import { verifyChaos } from "../scripts/_chaos_verify.ts";

/** The reduced size: about 300 deliveries over 14 sessions, one or two per way in (≈ 40–120 s a seed). */
const REDUCED = { messages: 300, sessions: 14, deadlineMs: 5 * 60_000 };

function check(seed: number, report: ChaosReport): void {
  const table = formatChaosReport(report);
  console.log(`chaos seed ${seed} (CHAOS_SEED=${seed} repeats the plan)\n${table}`);
  const detail = `seed ${seed}\n${table}\n${report.problems.slice(0, 30).join("\n")}`;
  // The run must have been under fire, or its zeros prove nothing.
  assert(figure(report, LABELS.kills) >= 3, detail);
  assert(figure(report, LABELS.openAtKills) > 0, detail);
  assert(figure(report, LABELS.duplicates) > 0 && figure(report, LABELS.bad) > 0, detail);
  assert(figure(report, LABELS.failures) > 0, detail);
  assert(figure(report, APPROVAL_LABELS.asked) > 0, detail);
  assert(figure(report, JOB_LABELS.scheduled) > 0, detail);
  assertEquals(figure(report, LABELS.accepted), figure(report, LABELS.messages), detail);
  assertEquals(figure(report, LABELS.answered), figure(report, LABELS.accepted), detail);
  const failed = report.rows.filter((r) => r.mustBeZero && Object.values(r.byWay).some((v) => v));
  assertEquals(failed.map((r) => r.label), [], detail);
  assert(report.ok, detail);
}

Deno.test({
  name:
    "runChaos() reduced, fixed seed: nothing lost, repeated unmarked, mixed or locked across every way in",
  async fn() {
    const seed = Number(Deno.env.get("CHAOS_SEED") ?? 1);
    check(seed, await runChaos({ ...REDUCED, seed }));
  },
});

Deno.test({
  name: "runChaos() reduced, a seed drawn at random (printed, so a failure can be repeated)",
  ignore: Deno.env.get("CHAOS_SEED") !== undefined,
  async fn() {
    const seed = Math.floor(Math.random() * 1e6);
    console.log(`chaos random seed: CHAOS_SEED=${seed}`);
    check(seed, await runChaos({ ...REDUCED, seed }));
  },
});

/** A small run whose one held send meets a fake (or a setting) that breaks a strategy on purpose. */
async function sabotaged(options: Partial<Parameters<typeof runChaos>[0]>): Promise<ChaosReport> {
  return await runChaos({
    seed: 7,
    messages: 24,
    sessions: 2,
    spanMs: 8_000,
    kills: 0,
    // Nothing else may fail: what the checks count is the held part alone.
    platform429Rate: 0,
    platform5xxRate: 0,
    modelFailRate: 0,
    badRate: 0,
    duplicateRate: 0,
    approvalRate: 0,
    // The held send must be a reply's part, not a preview's edit of it.
    streamReplies: false,
    keepOnFailure: false,
    ...options,
  });
}

Deno.test({
  name: "runChaos() counts what a broken in-doubt strategy does: duplicates unmarked, a part lost",
  async fn() {
    const cases: [string, Partial<Parameters<typeof runChaos>[0]>, string][] = [
      // A read-back that never finds the part: GitHub resends what the chat shows already.
      ["github blind", {
        ways: ["github"],
        hold: { way: "github", stored: true, atMs: 1_500 },
        sabotage: "blind-read-backs",
      }, LABELS.unmarked],
      ["slack blind", {
        ways: ["slack"],
        hold: { way: "slack", stored: true, atMs: 1_500 },
        sabotage: "blind-read-backs",
      }, LABELS.unmarked],
      // A Telegram resend without its note is a duplicate nobody can tell from a new reply.
      ["telegram no note", {
        ways: ["telegram"],
        hold: { way: "telegram", stored: true, atMs: 1_500 },
        sabotage: "strip-note",
      }, LABELS.unmarked],
      // LINE's fake forgets its retry keys: the part baton sends again under the same key shows twice.
      ["line retry key forgotten", {
        ways: ["line"],
        hold: { way: "line", stored: true, atMs: 1_500 },
        sabotage: "forget-retry-keys",
      }, LABELS.unmarked],
      // REPLY_IN_DOUBT=skip: a part cut off before it arrived is never sent.
      ["telegram skip", {
        ways: ["telegram"],
        hold: { way: "telegram", stored: false, atMs: 1_500 },
        replyInDoubt: "skip",
      }, LABELS.lost],
    ];
    for (const [name, options, label] of cases) {
      const report = await sabotaged(options);
      const detail = `${name}\n${formatChaosReport(report)}\n${report.problems.join("\n")}`;
      assertEquals(figure(report, LABELS.kills), 1, detail);
      assert(figure(report, label) >= 1, detail);
      assert(!report.ok, detail);
    }
  },
});

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
  const none = {
    sends: 0,
    lookups: 0,
    r429: 0,
    r5xxPosted: 0,
    r5xxNotPosted: 0,
    held: 0,
    heldPosted: 0,
  };
  return {
    seed: 3,
    ways: [way],
    sessions,
    modelRequests: [],
    modelAnswered: [],
    injectedModel: { r429: 0, r500: 0, stall: 0 },
    shown: posts(messages).map((p, i) => ({ ...p, at: i })),
    faults: { [way]: none } as ChaosObservation["faults"],
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
