// The OpenAI APIs' `model` field against `MODELS`: the turn's chosen model, or a 400 model_not_allowed before any turn starts; Workers.
import { allowedModel, modelChoiceOn, type ModelMenu } from "../lib/agent/mod.ts";
import type { BatonConfig } from "../lib/deployment/mod.ts";
import { RequestError } from "./_http.ts";

/** The deployment's model menu: `MODELS`, and `LLM_MODEL` as the default. */
export function modelMenu(config: BatonConfig): ModelMenu {
  return { allowed: config.models, default: config.llmModel };
}

/**
 * The model a request's `model` field chooses. Without `MODELS` the field is ignored (undefined:
 * the default runs; OpenAI clients always send some name); with it, an allowed name (or
 * `LLM_MODEL`) is the turn's model and any other name is refused with a 400 `model_not_allowed`
 * naming the list — thrown before the request is claimed or stored, so no turn starts.
 */
export function requestedModel(config: BatonConfig, field: string | undefined): string | undefined {
  const menu = modelMenu(config);
  if (!modelChoiceOn(menu) || field === undefined) return undefined;
  const model = allowedModel(menu, field);
  if (model) return model;
  throw new RequestError(
    400,
    `model: ${field.slice(0, 64)} is not allowed here; choose one of ${
      [...menu.allowed, menu.default].filter((m, i, all) => all.indexOf(m) === i).join(", ")
    } (MODELS)`,
    "model_not_allowed",
  );
}
