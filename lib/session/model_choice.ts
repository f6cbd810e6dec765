// A session's chosen model (`/model NAME`), kept in its `run` row across conversations; runtime-neutral.
import type { SessionDb, Tx } from "./session_db.ts";

/**
 * The model a chat session's user chose with `/model` (one of `MODELS`), remembered until they
 * choose again or `/model default`; /new keeps it (a choice of model, not of conversation).
 */
export class ModelChoiceStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** The chosen model's name, or null for the deployment's default. */
  get(): string | null {
    const value = this.#db.rows(`SELECT model FROM run WHERE id = 1`)[0]?.model;
    return typeof value === "string" && value ? value : null;
  }

  /** Remembers `model` as the session's choice (null: back to the default). */
  set(tx: Tx, model: string | null): void {
    this.#db.exec(tx, `UPDATE run SET model = ? WHERE id = 1`, model);
  }
}
