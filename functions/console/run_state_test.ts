// Unit tests for functions/console/run_state.ts: a run folded from its events; Deno.
import { assertEquals } from "@std/assert";
import { foldRunEvent, type RunView, SENDING } from "./run_state.ts";

function fold(events: [string, Record<string, unknown>][]): RunView {
  return events.reduce((run, [type, data]) => foldRunEvent(run, type, data), SENDING);
}

Deno.test("foldRunEvent() streams deltas, shows a tool call start and end, then the output", () => {
  const run = fold([
    ["run.queued", {}],
    ["run.started", {}],
    ["message.delta", { delta: "Hel" }],
    ["tool.started", { tool: "session_info", call_id: "c1" }],
    ["tool.completed", { tool: "session_info", call_id: "c1", duration_ms: 4 }],
    ["message.delta", { delta: "lo" }],
  ]);
  assertEquals([run.phase, run.text], ["running", "Hello"]);
  assertEquals(run.tools, [{ callId: "c1", tool: "session_info", done: true, durationMs: 4 }]);
  assertEquals(fold([["run.completed", { output: "Hello!" }]]).text, "Hello!");
});

Deno.test("foldRunEvent() shows an approval question until it is answered or the run ends", () => {
  const asked = fold([
    ["run.started", {}],
    ["approval.request", { call_id: "c1", tool: "session_info", arguments: {}, choices: ["once"] }],
  ]);
  assertEquals([asked.phase, asked.approval?.tool], ["waiting_for_approval", "session_info"]);
  const answered = foldRunEvent(asked, "approval.responded", { call_id: "c1", choice: "once" });
  assertEquals([answered.phase, answered.approval], ["running", null]);
  const stopped = foldRunEvent(asked, "run.cancelled", {});
  assertEquals([stopped.phase, stopped.approval], ["cancelled", null]);
});
