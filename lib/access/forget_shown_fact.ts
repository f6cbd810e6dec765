// Forgetting one remembered fact as a reader saw it (the console's Forget): only if the memory is still the version shown; runtime-neutral.
import type { RecordStorage } from "./record_storage.ts";
import { forgetFacts, readMemory } from "./user_memory.ts";

/**
 * Forgets fact number `which` (from 1, as `/memory` numbers them) when the memory is still at
 * `version`, the one the reader was shown: facts are numbered by position, so after any change
 * (a new fact, a `/forget` in chat) the same number may name another fact. `conflict`: it changed,
 * nothing is forgotten, the reader should read the list again. As `/forget N` otherwise.
 */
export function forgetShownFact(
  storage: RecordStorage,
  which: number,
  version: number,
): { forgotten: number; conflict: boolean } {
  if (readMemory(storage).version !== version) return { forgotten: 0, conflict: true };
  return { forgotten: forgetFacts(storage, which), conflict: false };
}
