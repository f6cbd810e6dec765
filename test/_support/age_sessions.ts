// Test support: moves every session's stored times back on disk between two workerd runs on one persistDir, as if that long had passed; Deno (node:sqlite).
import { DatabaseSync } from "node:sqlite";

/** The `.sqlite` files under `dir`, at any depth. */
async function _sqliteFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await _sqliteFiles(path));
    else if (entry.isFile && entry.name.endsWith(".sqlite")) found.push(path);
  }
  return found;
}

/**
 * Moves back by `ms` every stored time (each `…_at` or `at` column of an integer type) of every
 * session object persisted under `persistDir` (a database with an `inbox` table), as if `ms` had
 * passed since: a day-long window can be crossed without a day's wait or a clock of the tests' own
 * in the Worker. Only between runs: workerd must not have the files open. Returns the sessions
 * aged, so a test can tell it aged something.
 */
export async function ageSessions(persistDir: string, ms: number): Promise<number> {
  let aged = 0;
  for (const file of await _sqliteFiles(persistDir)) {
    const db = new DatabaseSync(file);
    try {
      const tables = db.prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         AND name NOT LIKE '_cf_%'`,
      ).all().map((row) => String(row.name));
      if (!tables.includes("inbox")) continue;
      for (const table of tables) {
        const columns = db.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(table)
          .filter((c) => /^integer$/i.test(String(c.type)))
          .map((c) => String(c.name))
          .filter((name) => name === "at" || name.endsWith("_at"));
        for (const column of columns) {
          db.prepare(`UPDATE "${table}" SET "${column}" = "${column}" - ? WHERE "${column}" > 0`)
            .run(ms);
        }
      }
      aged++;
    } finally {
      db.close();
    }
  }
  return aged;
}
