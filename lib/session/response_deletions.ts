// Responses deleted through the API (DELETE /v1/responses/{id}): a session's store of them, read before any response is shown; runtime-neutral.
import type { KeyStorage } from "../api/mod.ts";

/**
 * The session's deleted responses, one `deleted:<seq>` key each in the session object's key-value
 * storage (the layout sessions used before this store, so their deletions still hold). An erasure
 * clears them with everything else; a deleted response is never shown again, nor deleted twice.
 */
export class ResponseDeletions {
  readonly #storage: KeyStorage;

  constructor(storage: KeyStorage) {
    this.#storage = storage;
  }

  /** Whether response (message) `seq` was deleted. */
  deleted(seq: number): boolean {
    return this.#storage.get(_key(seq)) !== undefined;
  }

  /**
   * Deletes response `seq` when `exists()` says the session holds it and it was not deleted yet;
   * false otherwise (the API's 404).
   */
  delete(seq: number, exists: () => boolean): boolean {
    if (this.deleted(seq) || !exists()) return false;
    this.#storage.put(_key(seq), 1);
    return true;
  }
}

function _key(seq: number): string {
  return `deleted:${seq}`;
}
