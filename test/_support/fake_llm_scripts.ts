// Echo scripts for the fake model (fake_llm.ts) that several integration tests share; Deno.
import type { FakeModel, FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";

/** A fake model script: the step that answers each request. */
export type FakeScript = (req: FakeModelRequest) => FakeModelStep;

/**
 * Holds the call whose last user message is `text` (until `release()`), and answers every other
 * call with `prefix` plus its last user message: a slow turn with others queued behind it.
 */
export function holdOn(text: string, prefix = ""): FakeScript {
  return (req) =>
    req.lastUserText === text
      ? { kind: "hold" }
      : { kind: "text", text: `${prefix}${req.lastUserText}` };
}

/**
 * Calls `session_info`, then answers with the tool's result, so a test reads the context the
 * turn was bound to from the reply. `delayMs` (per tool call) spreads concurrent turns apart.
 */
export function echoSessionInfo(delayMs?: () => number): FakeScript {
  return (req) => {
    const tool = req.body.messages.findLast((m: { role: string }) => m.role === "tool");
    if (tool) return { kind: "text", text: tool.content };
    return {
      kind: "tool_call",
      name: "session_info",
      args: {},
      ...(delayMs ? { delayMs: delayMs() } : {}),
    };
  };
}

/**
 * For tests where session_info asks first (`APPROVAL_TOOLS=session_info`): calls it unless the
 * message starts with "plain" (answered "re: <text>"); after its result, answers "done: <result>".
 */
export const askThenEcho: FakeScript = (req) => {
  if (req.lastUserText.startsWith("plain")) {
    return { kind: "text", text: `re: ${req.lastUserText}` };
  }
  const last = req.body.messages.at(-1);
  if (last.role === "tool") return { kind: "text", text: `done: ${last.content}` };
  return { kind: "tool_call", name: "session_info", args: {} };
};

/**
 * How many calls of session_info really ran, as the model saw them: distinct calls whose tool
 * result carries the context (a denied call's result is an error instead).
 */
export function toolRuns(fake: FakeModel): number {
  const ran = new Set<string>();
  for (const req of fake.requests) {
    for (const m of req.body.messages) {
      if (m.role === "tool" && String(m.content).startsWith('{"platform"')) ran.add(m.tool_call_id);
    }
  }
  return ran.size;
}
