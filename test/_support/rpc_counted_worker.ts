// The reference Worker with its calls to the session objects counted: every method called on a SESSIONS stub (an RPC) counts one, GET /__test/rpcs answers the count and resets it; Workers (test entry).
import baton from "../../functions/index.ts";
import type { Env } from "../../functions/env.ts";

export {
  AccessDO,
  ConversationPointerDO,
  IdempotencyKeyDO,
  SessionDO,
} from "../../functions/index.ts";

let rpcs = 0;

/** `stub`, counting each method called on it (the RPC's name kept, its result as it came). */
function _counted<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== "function" || key === "then") return value;
      // Called bare: on an RPC stub, `value.apply` would name a remote property.
      return (...args: unknown[]) => {
        rpcs++;
        return value(...args);
      };
    },
  });
}

/** The SESSIONS namespace, handing out counted stubs. */
function _sessions(namespace: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function") return value;
      if (key === "get" || key === "getByName") {
        return (...args: unknown[]) => _counted(value.apply(target, args));
      }
      return value.bind(target);
    },
  });
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    if (new URL(request.url).pathname === "/__test/rpcs") {
      const count = rpcs;
      rpcs = 0;
      return Response.json({ rpcs: count });
    }
    return baton.fetch(request, { ...env, SESSIONS: _sessions(env.SESSIONS) }, ctx);
  },
};
