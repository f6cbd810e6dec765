// Echo scripts for the fake model (fake_llm.ts) that several integration tests share; Deno.
import type { FakeRequest, FakeStep } from "./fake_llm.ts";

/** A fake model script: the step that answers each request. */
export type FakeScript = (req: FakeRequest) => FakeStep;

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
