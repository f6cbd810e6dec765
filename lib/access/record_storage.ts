// The storage an access record lives in (a Durable Object's `storage.kv`, or memory in tests); runtime-neutral.
import type { KeyStorage } from "../api/mod.ts";

/** The storage a record lives in, with deletion (a Durable Object's `storage.kv`). */
export interface RecordStorage extends KeyStorage {
  delete(key: string): boolean;
}
