// Bench RPC counter: wraps a bundled baton Worker so that it counts its calls to the session objects; Deno.
import { bundleWorker } from "./worker.ts";

// The wrapper module, written next to the bundle it wraps: every method called on a stub of
// `SESSIONS` (an RPC, or a fetch) counts one; `GET /__bench/rpcs` answers the count and resets it.
const _WRAPPER = `
import worker from "./index.js";
export * from "./index.js";
let rpcs = 0;
const stub = (s) => new Proxy(s, {
  get(target, key) {
    const value = target[key];
    if (typeof value !== "function" || key === "then") return value;
    // Called bare: on an RPC stub, \`value.apply\` would name a remote property.
    return (...args) => { rpcs++; return value(...args); };
  },
});
const sessions = (ns) => new Proxy(ns, {
  get(target, key) {
    const value = target[key];
    if (typeof value !== "function") return value;
    if (key === "get" || key === "getByName") return (...args) => stub(value.apply(target, args));
    return value.bind(target);
  },
});
export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/__bench/rpcs") {
      const count = rpcs;
      rpcs = 0;
      return Response.json({ rpcs: count });
    }
    return worker.fetch(request, { ...env, SESSIONS: sessions(env.SESSIONS) }, ctx);
  },
};
`;

/**
 * Bundles a copy of the baton Worker at `scriptPath` (an `index.js` bundle) that counts its calls
 * to the session Durable Objects, and returns the copy's path. Only the Worker's calls count: the
 * objects' calls to each other are not the request path's round trips from the Worker.
 */
export async function countingBuild(scriptPath: string): Promise<string> {
  const dir = scriptPath.replace(/[^/]+$/, "");
  const entry = `${dir}rpc_counted_entry.js`;
  await Deno.writeTextFile(entry, _WRAPPER);
  return await bundleWorker(entry, `${dir}rpc_counted/index.js`);
}
