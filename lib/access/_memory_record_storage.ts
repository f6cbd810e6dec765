// Tests' stand-in for an access object's key-value storage: a Map that copies values in and out as Durable Object storage does; runtime-neutral (tests only).
import type { RecordStorage } from "./record_storage.ts";

/**
 * An empty in-memory `RecordStorage`; values are cloned, so a caller never shares one with it.
 * `keys()` lists what it holds, sorted.
 */
export function memoryRecordStorage(): RecordStorage & { keys(): string[] } {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => structuredClone(map.get(key)) as T | undefined,
    put: (key, value) => void map.set(key, structuredClone(value)),
    delete: (key) => map.delete(key),
    keys: () => [...map.keys()].sort(),
  };
}
