// The webhook routes as GET /openapi.json describes them: one per platform adapter, bodies opaque (the platforms' own formats); Workers.
import type { ApiOperation, OperationResponse } from "../lib/api/openapi_builder.ts";
import type { PlatformAdapter } from "../lib/chat/mod.ts";
import {
  discordAckBody,
  emptyAckBody,
  genericReplyBody,
  webhookAckBody,
} from "./_openapi_bodies.ts";

/** The 200 answers that are not `{"ok":true}`, by adapter: each platform's own acknowledgement. */
const _ACKS: Record<string, OperationResponse> = {
  discord: {
    description:
      "The interaction's answer: deferred (`type` 5) while the turn runs, or a message " +
      "at once (`type` 4: a refusal, a pong).",
    body: discordAckBody,
  },
  generic: {
    description: "The turn's reply itself, `{session, reply}` (with the request's echoed " +
      "fields), or `{ok, ignored}` when no turn was started.",
    body: genericReplyBody,
  },
  "google-chat": {
    description: "An empty object: no synchronous message, the reply is posted apart.",
    body: emptyAckBody,
  },
  twilio: {
    contentType: "text/xml",
    description: "Empty TwiML (`<Response/>`): the reply is sent apart.",
  },
};

const _OK_ACK: OperationResponse = {
  description: "Accepted: stored before this answer; `ignored` says why nothing was started.",
  body: webhookAckBody,
};

/**
 * One webhook per platform adapter, generated from the adapter table: the body is the platform's
 * own format (opaque here), signed as the platform signs; a GET handshake where it has one.
 */
export function webhookOperations(adapters: readonly PlatformAdapter[]): ApiOperation[] {
  return adapters.flatMap((adapter): ApiOperation[] => {
    const settings = adapter.requiredEnv.length
      ? ` Needs ${adapter.requiredEnv.join(", ")}; without them 403 \`not_configured\`.`
      : "";
    const post: ApiOperation = {
      method: "post",
      path: `/webhooks/${adapter.name}`,
      tag: "webhooks",
      summary: `${adapter.name} webhook`,
      description: `Deliveries from ${adapter.name}, in its own format and signature.${settings}`,
      auth: "none",
      requestBody: {
        body: { jsonSchema: { description: `${adapter.name}'s own payload.` } },
        description: "The platform's own payload (JSON or form-encoded), verified by signature.",
      },
      responses: {
        200: _ACKS[adapter.name] ?? _OK_ACK,
        204: { description: "Accepted, no body." },
      },
      errors: [401, 403, 413, 422, 503],
    };
    if (!adapter.handshake) return [post];
    return [post, {
      method: "get",
      path: `/webhooks/${adapter.name}`,
      tag: "webhooks",
      summary: `${adapter.name} subscription handshake`,
      auth: "none",
      responses: { 200: { contentType: "text/plain", description: "The echoed challenge." } },
      errors: [403],
    }];
  });
}
