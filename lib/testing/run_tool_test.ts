// Unit tests of runTool (baton/testing): the context bound for the tool's run, as in a turn; Deno.
import { assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { defineTool } from "../public/tools.ts";
import { currentContext } from "../public/context.ts";
import { runTool } from "./run_tool.ts";

const whoAsks = defineTool<{ greeting: string }>({
  name: "who_asks",
  description: "Greets the turn's user.",
  parameters: { type: "object", properties: { greeting: { type: "string" } } },
  run: ({ greeting }, { context }) =>
    `${greeting} ${context.user_name} (${currentContext().platform}, ${context.chat_id || "-"})`,
});

Deno.test("runTool() binds the context: run's options and currentContext() read it", async () => {
  const result = await runTool(whoAsks, { greeting: "hi" }, {
    context: { platform: "telegram", user_name: "ann" },
  });
  assertStrictEquals(result, "hi ann (telegram, -)");
  // Nothing stays bound after the call.
  assertEquals(currentContext().platform, "");
});

Deno.test("runTool() rejects with what the tool throws", async () => {
  const failing = defineTool({
    name: "failing",
    description: "",
    parameters: { type: "object" },
    run: () => {
      throw new RangeError("no");
    },
  });
  const error = await assertRejects(() => runTool(failing, {}));
  assertStrictEquals(error instanceof RangeError && error.message, "no");
});
