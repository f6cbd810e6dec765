// The webhook routes as GET /openapi.json describes them: one per platform adapter, bodies opaque (the platforms' own formats); Workers.
import type { ApiOperation } from "../lib/api/openapi_builder.ts";
import { PLATFORM_ADAPTERS } from "../lib/platforms/mod.ts";
import { objectBody } from "./_openapi_bodies.ts";

/**
 * One webhook per platform adapter, generated from the adapter table: the body is the platform's
 * own format (opaque here), signed as the platform signs; a GET handshake where it has one.
 */
export function webhookOperations(): ApiOperation[] {
  return PLATFORM_ADAPTERS.flatMap((adapter): ApiOperation[] => {
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
        200: { description: "Accepted: stored before this answer.", body: objectBody },
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
