// test/library_test.ts's own Worker: baton defined through the public API only (defineBaton, defineTool), with every turn hook and per-platform / per-channel options; Workers (cloudflare:workers).
import { env } from "cloudflare:workers";
import { defineBaton, defineTool } from "../../functions/mod.ts";
import {
  CHANNEL_CHAT,
  CHANNEL_MODEL,
  CHANNEL_PROMPT,
  CHANNEL_TOOL,
  DENIED_TOOL,
  DENIED_TOOL_RESULT,
  DENY_REASON,
  DEPLOYMENT_PROMPT,
  DROP_MARK,
  HANG_MARK,
  HANG_MS,
  TELEGRAM_MODEL,
  THROW_MARK,
  TURN_END_ERROR,
} from "./library_fixtures.ts";

/** Denied by the `toolCall` hook: its answer reaching the model would show the hook was skipped. */
const deleteEverything = defineTool<Record<string, never>>({
  name: DENIED_TOOL,
  description: "Deletes everything.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => DENIED_TOOL_RESULT,
});

/** Offered only in `CHANNEL_CHAT` (its channel's extra tool). */
const channelLookup = defineTool<Record<string, never>>({
  name: CHANNEL_TOOL,
  description: "Looks something up for this chat.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => "found it",
});

const baton = defineBaton({
  // A deployment's own var, read the way a user's tool or prompt reads its bindings and secrets.
  systemPrompt: (ctx) =>
    `${DEPLOYMENT_PROMPT} on ${ctx.platform}. (${(env as { LIBRARY_TAG?: string }).LIBRARY_TAG})`,
  tools: [deleteEverything],
  platforms: {
    telegram: {
      model: TELEGRAM_MODEL,
      channels: {
        [CHANNEL_CHAT]: {
          model: CHANNEL_MODEL,
          systemPrompt: CHANNEL_PROMPT,
          tools: [channelLookup],
        },
      },
    },
  },
  hooks: {
    messageReceived: ({ text }) => text.includes(DROP_MARK) ? { drop: true } : undefined,
    toolCall: ({ tool }) => tool === DENIED_TOOL ? { deny: DENY_REASON } : undefined,
    // Hangs far past HOOK_TIMEOUT_MS: the turn must go on without it.
    turnStart: ({ text }) =>
      text.includes(HANG_MARK) ? new Promise((resolve) => setTimeout(resolve, HANG_MS)) : undefined,
    turnEnd: ({ outcome }) => {
      if (outcome.status === "completed" && outcome.reply.includes(THROW_MARK)) {
        throw new Error(TURN_END_ERROR);
      }
    },
  },
});

// The names the test's Miniflare binds.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

export default baton;
