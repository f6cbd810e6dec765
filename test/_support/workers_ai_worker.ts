// test/workers_ai_voice_test.ts's own Worker: baton with an `AI` binding whose `run` relays a Whisper call to the loopback fake transcriber (FAKE_AI_URL), as Miniflare's own `ai` binding needs the network; Workers.
import { defineBaton } from "../../functions/mod.ts";
import type { Env } from "../../functions/env.ts";
import { decodeBase64 } from "../../lib/runtime/mod.ts";

/**
 * A stand-in for `env.AI`: takes only the turbo model's input shape (`audio` as base64), uploads
 * the decoded bytes with the model's name to the fake `/audio/transcriptions`, and answers as
 * Workers AI does (`{ text, word_count }`).
 */
function relayAi(fakeUrl: string) {
  return {
    async run(model: string, input: Record<string, unknown>) {
      const bytes = typeof input.audio === "string" ? decodeBase64(input.audio) : null;
      if (!bytes) throw new Error("3010: Invalid or incomplete input for the model");
      const form = new FormData();
      form.append("file", new Blob([bytes]), "audio.bin");
      form.append("model", model);
      const res = await fetch(`${fakeUrl}/audio/transcriptions`, { method: "POST", body: form });
      if (!res.ok) throw new Error(`5000: the model answered ${res.status}`);
      const { text } = await res.json() as { text: string };
      return { text, word_count: text.split(/\s+/).length };
    },
  };
}

/** `env` with the relay bound as `AI`. */
const withAi = (env: Env) =>
  ({ ...env, AI: relayAi((env as unknown as { FAKE_AI_URL: string }).FAKE_AI_URL) }) as Env;

const baton = defineBaton();
const { SessionDO: BaseSessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

/** The session object, built with the relay in its env (it transcribes inside the turn). */
export class SessionDO extends BaseSessionDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withAi(env));
  }
}
export { AccessDO, ConversationPointerDO, IdempotencyKeyDO };

export default {
  email: baton.email,
  fetch: (request: Request, env: Env, ctx: ExecutionContext) =>
    baton.fetch(request, withAi(env), ctx),
};
