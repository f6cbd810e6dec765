// The composition root: one deployment's options → its Worker handler and Durable Object classes; Workers (cloudflare:workers).
import { deploymentOf, type DeploymentOptions } from "../lib/deployment/mod.ts";
import { AccessDO } from "./access_do.ts";
import { ConversationPointerDO } from "./conversation_pointer_do.ts";
import type { Env } from "./env.ts";
import { IdempotencyKeyDO } from "./idempotency_key_do.ts";
import type { PdfjsLoader } from "../lib/media/pdf_text.ts";
import { type EmailHandler, emailHandler } from "./email_route.ts";
import { batonApp } from "./routes.ts";
import { SessionDO } from "./session_do.ts";

/**
 * What a deployment defines: its tools, its system prompt (a text or a function of the turn's
 * context), per-platform and per-channel prompts and tools, setting defaults (env vars win), the
 * model names, its hooks, and whether it reads PDFs. See docs/guides/library.md.
 */
export interface BatonOptions extends DeploymentOptions {
  /**
   * Reads PDFs' text with pdf.js: `loadPdfjs` of `baton/pdfjs`. Absent: a PDF is refused where
   * it arrives ("PDFs are not read on this deployment", as unread voice is), and the Worker
   * carries no pdf.js — 1.6 MB that workerd would compile at every start, read or not. Per
   * deployment, as every option: another deployment of the same bundle without it refuses PDFs.
   */
  pdf?: PdfjsLoader;
}

/** Constructor of a Durable Object class as wrangler.toml names it. */
type _DurableObjectClass<T> = new (ctx: DurableObjectState, env: Env) => T;

/** One deployment: the Worker's handler (`export default`) and its Durable Object classes. */
export interface Baton {
  /** The Worker's fetch handler. */
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
  /**
   * The Worker's email handler: mail that Email Routing hands to the Worker (docs/platforms/email.md), one
   * session per thread, answered by mail through the `EMAIL_OUT` binding.
   */
  email: EmailHandler;
  /**
   * The classes wrangler.toml binds (`SESSIONS` → `SessionDO`, `ACCESS` → `AccessDO`,
   * `CONVERSATIONS` → `ConversationPointerDO`, `IDEMPOTENCY_KEYS` → `IdempotencyKeyDO`): export
   * each under its name from the Worker's entry.
   */
  durableObjects: {
    SessionDO: _DurableObjectClass<SessionDO>;
    AccessDO: _DurableObjectClass<AccessDO>;
    ConversationPointerDO: _DurableObjectClass<ConversationPointerDO>;
    IdempotencyKeyDO: _DurableObjectClass<IdempotencyKeyDO>;
  };
}

/**
 * Defines a baton deployment. Everything that differs per deployment (tools, prompts, setting
 * defaults, hooks, pdf.js) is closed over here, in the app and in the classes made for it: nothing
 * of it is module-global, so two deployments in one bundle do not see each other's. Throws when a
 * tool name repeats among the tools one turn could get.
 *
 * ```ts
 * const baton = defineBaton({ tools: [rollDice], systemPrompt: (ctx) => `Help ${ctx.user_name}.` });
 * // With PDFs read: import { loadPdfjs } from "baton/pdfjs"; defineBaton({ …, pdf: loadPdfjs })
 * export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } = baton.durableObjects;
 * export default baton;
 * ```
 */
export function defineBaton(options: BatonOptions = {}): Baton {
  // Only a deployment that asks for pdf.js imports it (its loader, carried in its config's media
  // settings): the others' bundles hold none, and the others in its bundle do not read PDFs.
  const deployment = deploymentOf(options);
  const app = batonApp(deployment);
  const email = emailHandler(deployment);
  // Every object reads the env with the code's setting defaults under it, as the routes do.
  const withDefaults = <T extends object>(base: new (ctx: DurableObjectState, env: Env) => T) =>
    // deno-lint-ignore no-explicit-any
    class extends (base as new (ctx: DurableObjectState, env: Env) => any) {
      constructor(ctx: DurableObjectState, env: Env) {
        super(ctx, deployment.env(env));
      }
    } as _DurableObjectClass<T>;
  return {
    fetch: (request, env, ctx) => app.fetch(request, deployment.env(env), ctx),
    email: (message, env, ctx) => email(message, deployment.env(env), ctx),
    durableObjects: {
      SessionDO: class extends SessionDO {
        constructor(ctx: DurableObjectState, env: Env) {
          super(ctx, env, deployment);
        }
      },
      AccessDO: withDefaults(AccessDO),
      ConversationPointerDO: withDefaults(ConversationPointerDO),
      IdempotencyKeyDO: withDefaults(IdempotencyKeyDO),
    },
  };
}
