// Which model a turn runs on: the allowed list (`MODELS`), a user's or caller's choice, the default; runtime-neutral.

/** The models a deployment offers: `MODELS` and `LLM_MODEL`. */
export interface ModelMenu {
  /** The names a user (`/model NAME`) or API caller (`model`) may choose; empty: choice is off. */
  allowed: readonly string[];
  /** The model of a turn that chose none (`LLM_MODEL`); always allowed by name. */
  default: string;
}

/** What may choose a turn's model, strongest first. */
export interface ModelChoice {
  /**
   * The turn's own choice: its API request's `model`, else its session's `/model`. Honoured only
   * while it is allowed: a name `MODELS` dropped since it was remembered falls to the next.
   */
  chosen?: string | null;
  /**
   * The model of the turn's platform or channel, as the deployment's code sets it (not a user's
   * choice, so not checked against `MODELS`): `defineBaton`'s `platforms.<name>.model` and
   * `platforms.<name>.channels.<id>.model`.
   */
  channel?: string;
}

/** Whether users may choose models at all (`MODELS` set). */
export function modelChoiceOn(menu: ModelMenu): boolean {
  return menu.allowed.length > 0;
}

/**
 * The allowed name `name` stands for (compared without case: chat commands arrive lower-cased,
 * and a user types `gpt-4o` for `GPT-4o`), or null when it is not on the menu or choice is off.
 */
export function allowedModel(menu: ModelMenu, name: string): string | null {
  if (!modelChoiceOn(menu)) return null;
  const wanted = name.trim().toLowerCase();
  return [...menu.allowed, menu.default].find((m) => m.toLowerCase() === wanted) ?? null;
}

/**
 * The model name a turn runs on: its allowed choice, else its channel's model, else the
 * default. The one place that decides it, so every new source of a choice is added here.
 */
export function turnModelName(choice: ModelChoice, menu: ModelMenu): string {
  const chosen = choice.chosen ? allowedModel(menu, choice.chosen) : null;
  return chosen ?? (choice.channel || menu.default);
}
