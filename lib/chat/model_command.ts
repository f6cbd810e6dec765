// The /model command's texts: the models a user may choose, the switch, the refusal; runtime-neutral.

/** What `/model` did, as the session decided it. */
export type ModelAnswer =
  /** `MODELS` is unset: every turn runs on the deployment's model. */
  | { kind: "off"; current: string }
  /** `/model` alone: the list, and the session's model now. */
  | { kind: "list"; allowed: readonly string[]; current: string }
  /** The session's model is now `model` (`/model default`: the deployment's, `byDefault`). */
  | { kind: "switched"; model: string; byDefault?: boolean }
  /** `name` is not one of `allowed`: nothing changed. */
  | { kind: "refused"; name: string; allowed: readonly string[] };

/** The reply to /model. */
export function modelText(answer: ModelAnswer): string {
  switch (answer.kind) {
    case "off":
      return `Model choice is off here: every reply uses ${answer.current}.`;
    case "list":
      return [
        `Model: ${answer.current}.`,
        `Choose with /model NAME: ${answer.allowed.join(", ")} (/model default to go back).`,
      ].join("\n");
    case "switched":
      return answer.byDefault
        ? `Model: back to the default, ${answer.model}.`
        : `Model: ${answer.model} from your next message on.`;
    case "refused":
      return `Not available: ${answer.name}. Choose one of ${answer.allowed.join(", ")}.`;
  }
}

/** The /status line of the session's model, shown while model choice is on. */
export function modelStatusText(current: string): string {
  return `Model: ${current}.`;
}
