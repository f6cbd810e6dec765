// The MemoryStore of a Worker: users' memories in their own access objects, over RPC; Workers.
import type { MemoryStore } from "../lib/deployment/memory_tools.ts";
import { accessStub } from "./access_client.ts";
import type { Env } from "./env.ts";

/**
 * Users' memories (lib/deployment/memory_tools.ts `MemoryStore`): each owner's access object
 * (`sender:<platform>:<user>`, `apiuser:<tenant>:<user>`), one RPC per read or write.
 */
export function accessMemoryStore(env: Env): MemoryStore {
  return {
    read: (owner) => accessStub(env, owner).memory(),
    remember: (owner, fact) => accessStub(env, owner).remember(fact),
  };
}
