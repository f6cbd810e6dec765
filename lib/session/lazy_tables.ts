// The session tables most sessions never use (approvals, jobs, events, compaction, media), created by their store on first write; runtime-neutral.

/**
 * A group of tables (with their indexes) that a new session does not create: the store that owns
 * it creates it, in its current shape, on the first write that needs it. `name` is the group's
 * first table: a database has the group when it has that table (migrations of databases older
 * than the lazy road made every table, so an old database always has every group).
 *
 * A later migration that alters a lazy table must do so only where the table exists (a step on a
 * table not created yet is a no-op), and the group's `schema` here must then be changed to the
 * new shape: `schema_test.ts` proves every road ends at one schema.
 */
export interface LazyTable {
  readonly name: string;
  readonly schema: readonly string[];
}

/** What a lazy group needs of its database: one statement run, one read of table names. */
interface _Sql {
  run(statement: string): void;
  tableNames(): string[];
}

/**
 * Which lazy groups one database has: read once per object instance (one `sqlite_master` read,
 * and none at all for a database this instance created), then kept. A group created in a
 * transaction that rolls back is forgotten with it (`endTransaction(false)`).
 */
export class LazyTables {
  /** Tables known to exist; null until known (read on first question). */
  #present: Set<string> | null = null;
  /** Groups created in the open transaction: forgotten if it rolls back. */
  #created: string[] = [];
  readonly #sql: _Sql;

  constructor(sql: _Sql) {
    this.#sql = sql;
  }

  /** Records that the database has exactly these tables (a database just created: no lazy ones). */
  known(tables: Iterable<string>): void {
    this.#present = new Set(tables);
  }

  /** Whether `table`'s group exists: a store reads or deletes from it only then. */
  has(table: LazyTable): boolean {
    return this.#tables().has(table.name);
  }

  /** Creates `table`'s group unless it exists; inside a transaction only (its caller's `tx`). */
  ensure(table: LazyTable): void {
    const present = this.#tables();
    if (present.has(table.name)) return;
    // One statement for the whole group: each exec is a crossing into SQLite, and workerd runs
    // statements joined by semicolons in one call.
    this.#sql.run(table.schema.join(";\n"));
    present.add(table.name);
    this.#created.push(table.name);
  }

  /** The open transaction ended: committed, its groups stay; rolled back, they are forgotten. */
  endTransaction(committed: boolean): void {
    if (!committed) { for (const name of this.#created) this.#present?.delete(name); }
    this.#created = [];
  }

  #tables(): Set<string> {
    return this.#present ??= new Set(this.#sql.tableNames());
  }
}
