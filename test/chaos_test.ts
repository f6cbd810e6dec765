// The chaos run's reduced mode inside `npm test`: wrangler dev, faulty fakes, two SIGKILLs; Deno.
import { assert, assertEquals } from "@std/assert";
import { formatChaosReport, runChaos } from "../scripts/_chaos_run.ts";

Deno.test({
  name: "runChaos() reduced: no message lost or answered twice across two SIGKILLs",
  async fn() {
    const seed = Number(Deno.env.get("CHAOS_SEED") ?? 1);
    const report = await runChaos({ messages: 300, sessions: 10, kills: 2, seed });
    const table = formatChaosReport(report);
    console.log(`chaos seed ${seed} (CHAOS_SEED=${seed} repeats the plan)\n${table}`);
    const figure = (label: string) => report.figures.find((f) => f.label === label)!.value;
    // The run must have been under fire, or its zeros prove nothing.
    assertEquals(figure("runtime kills (SIGKILL, process group)"), 2);
    assert(figure("messages waiting or in a turn at the kills") > 0, table);
    assert(
      figure("duplicate deliveries") > 0 && figure("malformed or badly signed deliveries") > 0,
    );
    assert(figure("of which failure notices (turn failed)") > 0, table);
    assertEquals(figure("accepted messages"), figure("messages"), table);
    assertEquals(figure("replies delivered"), figure("accepted messages"), table);
    const failed = report.figures.filter((f) => f.mustBeZero && f.value !== 0);
    assertEquals(failed, [], `${table}\n${report.problems.slice(0, 20).join("\n")}`);
    assert(report.ok);
  },
});
