// The chaos run's reduced mode (the full lane, `npm run test:all`): every way in, faulty fakes, seeded SIGKILLs; a fixed seed and a random one; runs with a strategy broken on purpose; Deno.
import { assert, assertEquals } from "@std/assert";
import {
  APPROVAL_LABELS,
  type ChaosReport,
  COMPACTION_LABELS,
  figure,
  FILES_OUT_LABELS,
  FLOOD_LABELS,
  formatChaosReport,
  JOB_LABELS,
  LABELS,
  REPLAY_LABELS,
  runChaos,
  STEER_LABELS,
} from "../scripts/chaos/mod.ts";

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
  // Replays went out, and the flood met its quota (some of it refused), or their zeros prove nothing.
  assert(figure(report, REPLAY_LABELS.sent) > 0, detail);
  assert(figure(report, FLOOD_LABELS.refused) > 0, detail);
  // Sessions compacted while kills landed, and busy messages steered into running turns.
  assert(figure(report, COMPACTION_LABELS.compactions) > 0, detail);
  assert(figure(report, STEER_LABELS.taken) > 0, detail);
  // Telegram replies carried files, uploaded under the same faults and kills.
  assert(figure(report, FILES_OUT_LABELS.files) > 0, detail);
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
    flood: false,
    replayRate: 0,
    mediaRate: 0,
    filesOutRate: 0,
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
      // A file upload held and stored, then resent after the kill without its note: sent twice.
      ["telegram file no note", {
        ways: ["telegram"],
        hold: { way: "telegram", stored: true, atMs: 1_500, upload: true },
        filesOutRate: 1,
        sabotage: "strip-note",
      }, FILES_OUT_LABELS.twice],
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

Deno.test({
  name:
    "runChaos() counts what a guard taken away lets through: a reply a replay repeated, a flood's turns past the quota",
  async fn() {
    // Each replay carries a new signed message id (a new comment to baton, as if it keyed its dedup
    // on the delivery id), and baton runs without API_TURNS_PER_MINUTE while the flood is held to it.
    const report = await sabotaged({
      ways: ["github", "runs"],
      holdKill: false,
      flood: true,
      replayRate: 0.5,
      unguarded: ["replay-ids", "turn-quota"],
    });
    const detail = `${formatChaosReport(report)}\n${report.problems.join("\n")}`;
    assert(figure(report, REPLAY_LABELS.repeated) >= 1, detail);
    assert(figure(report, FLOOD_LABELS.beyond) >= 1, detail);
    assert(!report.ok, detail);
  },
});
