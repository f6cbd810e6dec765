// test/library_test.ts's own Worker: baton defined through the public API only (defineBaton, defineTool, baton/pdfjs), with every turn hook and per-platform / per-channel options, and a second deployment that reads PDFs under /reader; Workers (cloudflare:workers).
import { env } from "cloudflare:workers";
import { defineBaton, defineTool, type Env } from "../../functions/mod.ts";
import { loadPdfjs } from "../../functions/pdfjs/load_pdfjs.ts";
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
  READER_PREFIX,
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

/**
 * A second deployment in the same Worker, the only one that reads PDFs: its options must not
 * reach the first (nor the first's absence of `pdf` this one).
 */
const reader = defineBaton({ pdf: loadPdfjs });

/**
 * The env as the reader sees it: its own session objects under `SESSIONS` (the other three
 * classes of both deployments are alike: neither has setting defaults). One per env object, so
 * its config is read once.
 */
const readerEnvs = new WeakMap<Env, Env>();
function readerEnv(env: Env): Env {
  let own = readerEnvs.get(env);
  if (!own) {
    const sessions = (env as Env & { READER_SESSIONS: DurableObjectNamespace }).READER_SESSIONS;
    readerEnvs.set(env, own = { ...env, SESSIONS: sessions });
  }
  return own;
}

// The names the test's Miniflare binds.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;
export class ReaderSessionDO extends reader.durableObjects.SessionDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, readerEnv(env));
  }
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${READER_PREFIX}/`)) return baton.fetch(request, env, ctx);
    url.pathname = url.pathname.slice(READER_PREFIX.length);
    return reader.fetch(new Request(url, request), readerEnv(env), ctx);
  },
  email: baton.email,
};
