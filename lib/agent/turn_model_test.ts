// Unit tests of lib/agent/turn_model.ts (MODELS, a turn's chosen model) and lib/deployment/model_config.ts (MODEL_FALLBACKS); Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { allowedModel, modelChoiceOn, turnModelName } from "./turn_model.ts";
import { parseModelFallbacks } from "../deployment/model_config.ts";

const menu = { allowed: ["gpt-4.1-mini", "Llama-3-70B"], default: "gpt-4o-mini" };
const off = { allowed: [], default: "gpt-4o-mini" };

Deno.test("turnModelName() runs an allowed choice, else the channel's model, else the default", () => {
  assertStrictEquals(turnModelName({ chosen: "gpt-4.1-mini" }, menu), "gpt-4.1-mini");
  assertStrictEquals(turnModelName({ chosen: "llama-3-70b" }, menu), "Llama-3-70B");
  assertStrictEquals(turnModelName({}, menu), "gpt-4o-mini");
  assertStrictEquals(turnModelName({ chosen: null, channel: "chan-model" }, menu), "chan-model");
  // A name MODELS dropped since it was remembered, or any name with choice off, is not run.
  assertStrictEquals(turnModelName({ chosen: "dropped" }, menu), "gpt-4o-mini");
  assertStrictEquals(turnModelName({ chosen: "gpt-4.1-mini" }, off), "gpt-4o-mini");
});

Deno.test("allowedModel() allows MODELS and the default, by name without case; nothing while choice is off", () => {
  assertStrictEquals(allowedModel(menu, "GPT-4.1-MINI"), "gpt-4.1-mini");
  assertStrictEquals(allowedModel(menu, "gpt-4o-mini"), "gpt-4o-mini");
  assertStrictEquals(allowedModel(menu, "gpt-5"), null);
  assertStrictEquals(allowedModel(off, "gpt-4o-mini"), null);
  assertEquals([modelChoiceOn(menu), modelChoiceOn(off)], [true, false]);
});

Deno.test("parseModelFallbacks() reads names on LLM_BASE_URL and name@baseURL entries with LLM_API_KEY_<N>", () => {
  const env = {
    LLM_BASE_URL: "https://main.example/v1",
    LLM_API_KEY: "sk-main",
    MODEL_FALLBACKS:
      " small , @cf/meta/llama@https://other.example/v1,far@http://u:p@third.example/v1",
    LLM_API_KEY_2: "sk-other",
  };
  assertEquals(parseModelFallbacks(env), [
    { model: "small", baseURL: "https://main.example/v1", apiKey: "sk-main" },
    { model: "@cf/meta/llama", baseURL: "https://other.example/v1", apiKey: "sk-other" },
    // Another endpoint without its own key gets none: the main key never leaves its host.
    { model: "far", baseURL: "http://u:p@third.example/v1", apiKey: "" },
  ]);
  assertEquals(parseModelFallbacks({ ...env, LLM_API_KEY_1: "sk-one" })[0].apiKey, "sk-one");
  assertEquals(parseModelFallbacks({ MODEL_FALLBACKS: "small" }), [], "the echo model has none");
  assertEquals(parseModelFallbacks({ LLM_BASE_URL: "https://main.example/v1" }), []);
});
