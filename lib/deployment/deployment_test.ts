// Unit tests of deploymentOf: per-turn prompts and tools by platform and channel, setting defaults under env, its config read once per env; Deno.
import { assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import { defineTool, type Tool } from "../agent/mod.ts";
import { currentContext, type SessionContext, withSessionContext } from "../runtime/mod.ts";
import { readConfig } from "./config.ts";
import { type BatonSettings, deploymentOf } from "./deployment.ts";

function tool(name: string): Tool {
  return defineTool({ name, description: name, parameters: { type: "object" }, run: () => name });
}

function context(fields: Partial<Record<string, string>>): SessionContext {
  return withSessionContext(fields, {}, () => currentContext());
}

const names = (tools: Tool[]) => tools.map((t) => t.name);

Deno.test("deploymentOf() turn(): the channel's prompt, else the platform's, else the deployment's, else SYSTEM_PROMPT", async () => {
  const d = deploymentOf({
    systemPrompt: (ctx) => `all: ${ctx.user_name} on ${ctx.platform}; base ${ctx.system_prompt}`,
    platforms: {
      slack: {
        systemPrompt: "slack",
        channels: {
          C1: {
            systemPrompt: (ctx) => `C1 ${ctx.channel?.settings?.team}`,
            settings: { team: "ops" },
          },
        },
      },
    },
  });
  const slackC1 = await d.turn(context({ platform: "slack", chat_id: "C1" }), "env");
  assertStrictEquals(slackC1.system, "C1 ops");
  assertStrictEquals(
    (await d.turn(context({ platform: "slack", chat_id: "C2" }), "env")).system,
    "slack",
  );
  assertStrictEquals(
    (await d.turn(context({ platform: "telegram", user_name: "ann" }), "env")).system,
    "all: ann on telegram; base env",
  );
  assertStrictEquals((await deploymentOf({}).turn(context({}), "env")).system, "env");
});

Deno.test("deploymentOf() turn(): a prompt function gets the time as ISO 8601", async () => {
  let now = "";
  await deploymentOf({ systemPrompt: (ctx) => (now = ctx.now) }).turn(context({}), "");
  assertStrictEquals(new Date(now).toISOString(), now);
});

Deno.test("deploymentOf() turn(): a platform's and a channel's tools add to the deployment's; toolNames holds them all", async () => {
  const d = deploymentOf({
    tools: [tool("a")],
    platforms: { slack: { tools: [tool("b")], channels: { C1: { tools: [tool("c")] } } } },
  });
  assertEquals(names(d.tools), ["a"]);
  assertEquals(names((await d.turn(context({ platform: "slack", chat_id: "C1" }), "")).tools), [
    "b",
    "c",
  ]);
  assertEquals(
    names((await d.turn(context({ platform: "telegram", chat_id: "C1" }), "")).tools),
    [],
  );
  for (const name of ["a", "b", "c", "session_info", "delegate_task"]) {
    assertStrictEquals(d.toolNames.has(name), true, name);
  }
});

Deno.test("deploymentOf() throws when a tool name repeats among one turn's tools", () => {
  const twice = assertThrows(() => deploymentOf({ tools: [tool("a"), tool("a")] }));
  assertStrictEquals(String(twice), "TypeError: defineBaton: tool a given twice (tools)");
  const inChannel = assertThrows(
    () =>
      deploymentOf({
        tools: [tool("a")],
        platforms: { slack: { channels: { C1: { tools: [tool("a")] } } } },
      }),
  );
  assertStrictEquals(String(inChannel), "TypeError: defineBaton: tool a given twice (slack C1)");
  // The same name on two platforms is fine: no turn gets both.
  deploymentOf({ platforms: { slack: { tools: [tool("x")] }, telegram: { tools: [tool("x")] } } });
});

Deno.test("deploymentOf() env(): settings and model names are defaults under the env, which wins when set", () => {
  const d = deploymentOf({
    settings: { MAX_TURN_STEPS: 12, STREAM_REPLIES: false, LOG_LEVEL: "debug" },
    model: { name: "m1", fallbacks: ["m2", "m3"] },
  });
  const binding = {};
  const env = d.env({ LOG_LEVEL: "warn", STREAM_REPLIES: "", SESSIONS: binding });
  assertEquals(env, {
    LOG_LEVEL: "warn",
    STREAM_REPLIES: "false",
    MAX_TURN_STEPS: "12",
    LLM_MODEL: "m1",
    MODEL_FALLBACKS: "m2,m3",
    SESSIONS: binding,
  });
  assertStrictEquals(env.SESSIONS, binding);
  const plain = { A: "1" };
  assertStrictEquals(deploymentOf({}).env(plain), plain);
});

Deno.test("DeploymentOptions.settings: typed by the settings table (a misspelt name does not type-check)", () => {
  const settings: BatonSettings = { MAX_TURN_STEPS: 6, LLM_API_KEY_2: "k", STREAM_REPLIES: false };
  // @ts-expect-error MAX_TURN_STEP is no setting: `deno test` type-checks this file and fails here.
  const misspelt: BatonSettings = { MAX_TURN_STEP: 6 };
  const d = deploymentOf({ settings: { ...settings, ...misspelt } });
  assertStrictEquals((d.env({}) as Record<string, unknown>).MAX_TURN_STEPS, "6");
});

Deno.test("deploymentOf() config(): read once per env object, setting defaults and all, and per deployment", () => {
  let reads = 0;
  const env = new Proxy({ LLM_MODEL: "m-env" } as Record<string, unknown>, {
    get(target, name) {
      reads++;
      return Reflect.get(target, name);
    },
  });
  // With defaults every request's env is merged anew: the config must still be read once.
  const d = deploymentOf({ settings: { MAX_TURN_STEPS: 7 } });
  const first = d.config(d.env(env));
  assertStrictEquals(first.maxTurnSteps, 7);
  assertStrictEquals(first.llmModel, "m-env");
  const before = reads;
  assertStrictEquals(d.config(d.env(env)), first, "the same env object, the same config");
  assertStrictEquals(d.config(env), first, "the env as it came finds it too");
  assertStrictEquals(d.env(d.env(env)), d.env(env), "a merged env is merged once");
  assertStrictEquals(reads, before, "a second request reads no variable");
  // Another deployment on the same env has its own config: its defaults, its pdf.js.
  const loader = () => import("unpdf/pdfjs");
  const reader = deploymentOf({ pdf: loader });
  assertStrictEquals(reader.config(env).media.pdf, loader);
  assertStrictEquals(reader.config(env).maxTurnSteps, readConfig({}).maxTurnSteps);
  assertStrictEquals(first.media.pdf, null);
  assertStrictEquals(deploymentOf().config(env).media.pdf, null);
});
