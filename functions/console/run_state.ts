// A run as the chat shows it, folded from the runs API's events (replayed in full on every attach); browser and Deno.

/** A tool call of the run, shown as it starts and finishes. */
export interface ToolCallView {
  callId: string;
  tool: string;
  done: boolean;
  durationMs?: number;
  error?: string;
}

/** An approval question the run waits on. */
export interface ApprovalView {
  callId: string;
  tool: string;
  arguments: unknown;
  choices: string[];
}

/** Where a run stands, from this page's point of view. */
export type RunPhase =
  | "sending"
  | "queued"
  | "running"
  | "waiting_for_approval"
  | "completed"
  | "failed"
  | "cancelled";

/** Everything the chat shows of one run. */
export interface RunView {
  phase: RunPhase;
  /** The reply so far, delta by delta. */
  text: string;
  tools: ToolCallView[];
  approval: ApprovalView | null;
  error: string | null;
}

/** A run not yet known to the server: the message is on its way. */
export const SENDING: RunView = {
  phase: "sending",
  text: "",
  tools: [],
  approval: null,
  error: null,
};

/** Phases after which nothing changes: the event stream has ended. */
export const FINAL_PHASES: ReadonlySet<RunPhase> = new Set(["completed", "failed", "cancelled"]);

/** The run after event `type` with `data` (an event of the runs API's stream). */
export function foldRunEvent(run: RunView, type: string, data: Record<string, unknown>): RunView {
  const callId = String(data.call_id ?? "");
  switch (type) {
    case "run.queued":
      return { ...run, phase: "queued" };
    case "run.started":
      // A run started again after a crash replays from here: its deltas come again.
      return { ...run, phase: "running", text: "", tools: [] };
    case "message.delta":
      return { ...run, text: run.text + String(data.delta ?? "") };
    case "tool.started":
      return {
        ...run,
        tools: [...run.tools, { callId, tool: String(data.tool ?? "tool"), done: false }],
      };
    case "tool.completed":
      return {
        ...run,
        tools: run.tools.map((t) =>
          t.callId === callId
            ? {
              ...t,
              done: true,
              ...(typeof data.duration_ms === "number" ? { durationMs: data.duration_ms } : {}),
              ...(typeof data.error === "string" ? { error: data.error } : {}),
            }
            : t
        ),
      };
    case "approval.request":
      return {
        ...run,
        phase: "waiting_for_approval",
        approval: {
          callId,
          tool: String(data.tool ?? "tool"),
          arguments: data.arguments,
          choices: Array.isArray(data.choices) ? data.choices.map(String) : ["once", "deny"],
        },
      };
    case "approval.responded":
      return run.approval?.callId === callId ? { ...run, phase: "running", approval: null } : run;
    case "run.completed":
      return {
        ...run,
        phase: "completed",
        approval: null,
        text: typeof data.output === "string" ? data.output : run.text,
      };
    case "run.failed": {
      const error = data.error as { message?: unknown } | undefined;
      return {
        ...run,
        phase: "failed",
        approval: null,
        error: String(error?.message ?? "the run failed"),
      };
    }
    case "run.cancelled":
      return { ...run, phase: "cancelled", approval: null };
    default:
      return run;
  }
}
