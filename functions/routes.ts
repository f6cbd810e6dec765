// The Worker's HTTP surface: path → handler table, JSON errors for everything refused; Workers.
import { Hono } from "hono";
import { methodNotAllowed } from "hono/method-not-allowed";
import { secureHeaders } from "hono/secure-headers";
import type { Deployment } from "../lib/deployment/mod.ts";
import { errorText, log } from "../lib/runtime/mod.ts";
import { requestBodyLimit } from "./_body_limit.ts";
import { corsPolicy } from "./_cors.ts";
import { type App, entryBinding, jsonError, RequestError } from "./_http.ts";
import { accessRoutes } from "./access_routes.ts";
import { apiRoutes } from "./api_routes.ts";
import { jobRoutes } from "./job_routes.ts";
import { mcpRoutes } from "./mcp_routes.ts";
import { mediaRoutes } from "./media_routes.ts";
import { responseRoutes } from "./responses_routes.ts";
import { runRoutes } from "./run_routes.ts";
import { userRoutes } from "./user_routes.ts";
import { memoryRoutes } from "./memory_routes.ts";
import { webhookRoutes } from "./webhook_routes.ts";

/**
 * The HTTP app of one deployment: every route, each reading the deployment (its tools) and the
 * config from the request's variables. Made per deployment by `defineBaton` (define_baton.ts).
 */
export function batonApp(deployment: Deployment): Hono<App> {
  const app = new Hono<App>();

  // Outermost, so every answer carries them: errors, 404s, 405s, preflights, webhooks. A JSON API
  // needs the two that stop a browser from treating a body as something else (nosniff) and from
  // leaking the URL onwards (no-referrer); the rest govern documents a browser renders (framing,
  // opener, XSS filter, downloads) or are the domain's choice (HSTS), so they stay off.
  app.use(
    "*",
    secureHeaders({
      xContentTypeOptions: true,
      referrerPolicy: true,
      crossOriginEmbedderPolicy: false,
      crossOriginResourcePolicy: false,
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      strictTransportSecurity: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xFrameOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }),
  );
  // The one entry binding of a Worker request (_http.ts).
  app.use("*", entryBinding(deployment));
  // Before the method check and the routes' key checks: a preflight carries neither a routed method
  // (OPTIONS) nor the key, and is answered here.
  app.use("*", corsPolicy);
  app.use(
    "*",
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) =>
        c.json(
          { error: { message: `method ${c.req.method} not allowed`, type: "method_not_allowed" } },
          405,
          {
            Allow: methods.join(", "),
          },
        ),
    }),
  );
  // 1 MiB, raised on the OpenAI routes for one medium when MEDIA is bound (functions/_body_limit.ts).
  app.use("*", requestBodyLimit);

  app.get("/healthz", (c) => c.json({ ok: true }));
  // The OpenAPI description, no key needed: its module is evaluated on the first request, never at
  // start-up (the zod schemas of every answer are built there).
  app.get("/openapi.json", async (c) => (await import("./openapi.ts")).openApiRoute(c));
  app.route("/v1/runs", runRoutes);
  app.route("/v1/responses", responseRoutes);
  app.route("/v1/access", accessRoutes);
  app.route("/v1/jobs", jobRoutes);
  app.route("/v1/users", userRoutes);
  app.route("/v1/memory", memoryRoutes);
  app.route("/v1", apiRoutes);
  app.route("/webhooks", webhookRoutes);
  app.route("/mcp", mcpRoutes);
  app.route("/media", mediaRoutes);

  // No route matched: a GET or HEAD may name one of the console's files (`/` is its page); anything
  // else, and a file that is not there, is our JSON 404. The assets never see another method.
  app.notFound(async (c) => {
    if ((c.req.method === "GET" || c.req.method === "HEAD") && c.env.ASSETS) {
      const url = new URL(c.req.url);
      if (url.pathname === "/") url.pathname = "/index.html";
      const file = await c.env.ASSETS.fetch(new Request(url, c.req.raw));
      // A copy: the middleware above adds its headers, and a fetched response's are immutable.
      if (file.status !== 404) return new Response(file.body, file);
    }
    return jsonError(c, 404, `no route for ${c.req.method} ${c.req.path}`, "not_found");
  });
  app.onError((error, c) => {
    if (error instanceof RequestError) return jsonError(c, error.status, error.message, error.type);
    log.error("unhandled", { error: errorText(error) });
    return jsonError(c, 500, "internal error", "internal_error");
  });
  return app;
}
