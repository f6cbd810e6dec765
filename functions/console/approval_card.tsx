// An approval question of a run, with one button per choice; browser (preact).
import type { ApprovalView } from "./run_state.ts";

const _LABELS: Record<string, string> = {
  once: "Allow once",
  session: "Allow for this conversation",
  always: "Always allow",
  deny: "Deny",
};

/** Shows what the agent wants to run and answers with the choice clicked. */
export function ApprovalCard(
  props: { approval: ApprovalView; onAnswer: (choice: string) => void },
) {
  const { approval } = props;
  return (
    <div class="approval" role="group" aria-label="Approval needed">
      <p>
        The agent wants to run <code>{approval.tool}</code> with
      </p>
      <pre>{JSON.stringify(approval.arguments ?? {}, null, 2)}</pre>
      <div class="choices">
        {approval.choices.map((choice) => (
          <button
            type="button"
            key={choice}
            class={choice === "deny" ? "secondary" : ""}
            data-choice={choice}
            onClick={() => props.onAnswer(choice)}
          >
            {_LABELS[choice] ?? choice}
          </button>
        ))}
      </div>
    </div>
  );
}
