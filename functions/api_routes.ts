// OpenAI-compatible API routes: chat completions (JSON and SSE), models, session state; Workers.
import { Hono } from "hono";
import { readConfig } from "../lib/config.ts";
import {
  chatCompletion,
  chatCompletionChunk,
  chatCompletionRequest,
  chatTurnInput,
  deriveSessionId,
  SESSION_ID,
} from "../lib/openai_api.ts";
import { withSessionContext } from "../lib/session_context.ts";
import type { InboundMessage, TurnOutcome } from "../lib/session_sentinel.ts";
import { SseWriter } from "../lib/sse.ts";
import {
  type App,
  awaitOutcome,
  failureStatus,
  parseJson,
  RequestError,
  requireApiKey,
  sessionStub,
  submitMessage,
} from "./_http.ts";

/** Routes under /v1, each behind the API key. */
export const apiRoutes = new Hono<App>();

apiRoutes.get("/models", requireApiKey, (c) => {
  const { llmModel } = readConfig(c.env as unknown as Record<string, unknown>);
  return c.json({
    object: "list",
    data: [{ id: llmModel, object: "model", created: 0, owned_by: "baton" }],
  });
});

apiRoutes.get("/sessions/:key", requireApiKey, (c) => {
  const key = c.req.param("key");
  if (!key || key.length > 512) {
    throw new RequestError(400, "session key: invalid", "invalid_request_error");
  }
  return withSessionContext({ session_key: key }, {}, async () => {
    const snapshot = await sessionStub(c.env, key).snapshot({ session_key: key });
    return c.json({ key, ...snapshot });
  });
});

for (const command of ["stop", "reset"] as const) {
  apiRoutes.post(`/sessions/:key/${command}`, requireApiKey, (c) => {
    const key = c.req.param("key");
    if (!key || key.length > 512) {
      throw new RequestError(400, "session key: invalid", "invalid_request_error");
    }
    return withSessionContext({ session_key: key }, {}, async () => {
      const stub = sessionStub(c.env, key);
      const result = await stub.control(command === "stop" ? "stop" : "new", { session_key: key });
      return c.json({ key, status: command === "stop" ? "stopped" : "reset", ...result });
    });
  });
}

apiRoutes.post("/chat/completions", requireApiKey, async (c) => {
  const config = readConfig(c.env as unknown as Record<string, unknown>);
  const request = parseJson(chatCompletionRequest, new Uint8Array(await c.req.arrayBuffer()));
  const turn = chatTurnInput(request);
  if (!turn) throw new RequestError(400, "messages: no user message", "invalid_request_error");
  const header = c.req.header("x-session-id");
  if (header !== undefined && !SESSION_ID.test(header)) {
    throw new RequestError(
      400,
      "X-Session-Id: 1-128 characters of [A-Za-z0-9._:-]",
      "invalid_request_error",
    );
  }
  const sessionId = header ?? (await deriveSessionId(turn.system, turn.firstUserText));
  const sessionKey = `api:${sessionId}`;
  const message: InboundMessage = {
    text: turn.input,
    context: {
      platform: "api",
      chat_id: sessionId,
      user_id: request.user ?? "",
      session_key: sessionKey,
    },
    ...(turn.system ? { system: turn.system } : {}),
    ...(turn.seed.length ? { seed: turn.seed } : {}),
  };
  return withSessionContext(message.context, config.contextDefaults, async () => {
    const receipt = await submitMessage(c.env, sessionKey, message, true);
    const id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`;
    const headers = { "X-Session-Id": sessionId };
    const outcome = awaitOutcome(c.env, message, receipt.seq);
    if (request.stream) return _streamReply(id, config.llmModel, outcome, headers);
    const result = await outcome;
    if (result.status === "failed") {
      return c.json(
        { error: result.error },
        failureStatus(result.error),
        headers,
      );
    }
    return c.json(chatCompletion(id, config.llmModel, result.reply, result.usage), 200, headers);
  });
});

function _streamReply(
  id: string,
  model: string,
  outcome: Promise<TurnOutcome>,
  headers: Record<string, string>,
): Response {
  const sse = new SseWriter();
  const keepAlive = setInterval(() => sse.comment("keep-alive"), 15_000);
  sse.comment("queued");
  outcome
    .then((result) => {
      if (result.status === "failed") {
        sse.write({ error: result.error });
      } else {
        sse.write(chatCompletionChunk(id, model, { role: "assistant", content: "" })) &&
          sse.write(chatCompletionChunk(id, model, { content: result.reply })) &&
          sse.write(chatCompletionChunk(id, model, {}, "stop"));
      }
      sse.write("[DONE]");
    }, () => {
      sse.write({ error: { message: "the session is unavailable; retry", type: "unavailable" } });
    })
    .finally(() => {
      clearInterval(keepAlive);
      sse.close();
    });
  return new Response(sse.readable, {
    headers: { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
