// The owner's list of pairing codes and paired users, in one object off the message path; runtime-neutral (SQLite).

/** The SQL handle the directory needs (a Durable Object's `storage.sql`). */
export interface DirectorySql {
  exec(query: string, ...bindings: (string | number | null)[]): {
    toArray(): Record<string, unknown>[];
  };
}

/** A code waiting for approval, as the owner lists it. */
export interface PairingRequest {
  code: string;
  platform: string;
  user: string;
  name: string;
  /** ISO times. */
  first_message_at: string;
  expires_at: string;
}

/** A paired user, as the owner lists it. */
export interface PairedUser {
  platform: string;
  user: string;
  name: string;
  approved_at: string;
  approved_by: string;
}

/** What approving a code found. */
export type ApprovalResult =
  | { kind: "approved"; user: PairedUser }
  /** Someone approved it before: the sender is paired (approve again to heal a half-done approval). */
  | { kind: "already_approved"; user: PairedUser }
  | { kind: "not_found" };

/** Rows of expired, unapproved codes are kept this long, then pruned. */
const _KEEP_EXPIRED_MS = 24 * 60 * 60 * 1000;

/**
 * The directory: which code names which sender, and who is paired. The Worker reaches it only to
 * register a new code (at most once per sender per hour), to approve, to revoke and to list —
 * never for an ordinary message, whose check is the sender's own object.
 */
export class PairingDirectory {
  readonly #sql: DirectorySql;

  constructor(sql: DirectorySql) {
    this.#sql = sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS pairing_code (
        code TEXT PRIMARY KEY, platform TEXT NOT NULL, user TEXT NOT NULL, name TEXT NOT NULL,
        first_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        approved_at INTEGER, approved_by TEXT)`,
    );
    sql.exec(
      `CREATE TABLE IF NOT EXISTS paired_user (
        platform TEXT NOT NULL, user TEXT NOT NULL, name TEXT NOT NULL,
        approved_at INTEGER NOT NULL, approved_by TEXT NOT NULL, PRIMARY KEY (platform, user))`,
    );
  }

  /**
   * Records a pending code (again, idempotently, each time its message is sent). False when the
   * code already names another sender, `"full"` when `limit` other senders of the platform wait
   * with a code already (`MAX_PENDING_PAIRINGS`): either way the caller must not hand it out.
   */
  register(
    pairing: { code: string; platform: string; user: string; name: string },
    firstAt: number,
    expiresAt: number,
    now: number,
    limit = Number.POSITIVE_INFINITY,
  ): boolean | "full" {
    this.#sql.exec(
      "DELETE FROM pairing_code WHERE approved_at IS NULL AND expires_at < ?",
      now - _KEEP_EXPIRED_MS,
    );
    const held = this.#sql.exec(
      "SELECT platform, user FROM pairing_code WHERE code = ?",
      pairing.code,
    ).toArray()[0];
    if (held && (held.platform !== pairing.platform || held.user !== pairing.user)) return false;
    // Strangers beyond the owner's patience get no code: the list (and this table) stays bounded.
    const waiting = Number(
      this.#sql.exec(
        `SELECT count(*) AS n FROM pairing_code
         WHERE platform = ? AND user != ? AND approved_at IS NULL AND expires_at > ?`,
        pairing.platform,
        pairing.user,
        now,
      ).toArray()[0].n,
    );
    if (waiting >= limit) return "full";
    this.#sql.exec(
      `INSERT INTO pairing_code (code, platform, user, name, first_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (code) DO UPDATE SET name = excluded.name, expires_at = excluded.expires_at`,
      pairing.code,
      pairing.platform,
      pairing.user,
      pairing.name,
      firstAt,
      expiresAt,
    );
    return true;
  }

  /** Approves a code once: the first approval pairs its sender, later ones say it was done. */
  approve(code: string, by: string, now: number): ApprovalResult {
    const row = this.#sql.exec("SELECT * FROM pairing_code WHERE code = ?", code).toArray()[0];
    if (!row) return { kind: "not_found" };
    const platform = String(row.platform);
    const user = String(row.user);
    if (row.approved_at !== null) {
      const paired = this.#paired(platform, user);
      // Revoked since: the code is spent; the sender asks again and gets a new one.
      return paired ? { kind: "already_approved", user: paired } : { kind: "not_found" };
    }
    if (Number(row.expires_at) <= now) return { kind: "not_found" };
    this.#sql.exec(
      "UPDATE pairing_code SET approved_at = ?, approved_by = ? WHERE code = ?",
      now,
      by,
      code,
    );
    // Other codes of the same sender are spent too.
    this.#sql.exec(
      `DELETE FROM pairing_code WHERE platform = ? AND user = ? AND code != ?`,
      platform,
      user,
      code,
    );
    this.#sql.exec(
      `INSERT INTO paired_user (platform, user, name, approved_at, approved_by) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (platform, user) DO UPDATE SET name = excluded.name,
         approved_at = excluded.approved_at, approved_by = excluded.approved_by`,
      platform,
      user,
      String(row.name),
      now,
      by,
    );
    return { kind: "approved", user: this.#paired(platform, user)! };
  }

  /** Forgets a paired user; true when they were listed. */
  forget(platform: string, user: string): boolean {
    const had = this.#paired(platform, user) !== null;
    this.#sql.exec("DELETE FROM paired_user WHERE platform = ? AND user = ?", platform, user);
    return had;
  }

  /**
   * Forgets everything kept of sender `platform:user` (their erasure): the pairing and every code,
   * pending, expired or spent. Returns what was there.
   */
  erase(platform: string, user: string): { paired: boolean; codes: number } {
    const paired = this.forget(platform, user);
    const codes = this.#sql.exec(
      "SELECT count(*) AS n FROM pairing_code WHERE platform = ? AND user = ?",
      platform,
      user,
    ).toArray()[0];
    this.#sql.exec("DELETE FROM pairing_code WHERE platform = ? AND user = ?", platform, user);
    return { paired, codes: Number(codes?.n ?? 0) };
  }

  /** Codes waiting for approval, oldest request first. */
  pending(now: number): PairingRequest[] {
    return this.#sql.exec(
      `SELECT * FROM pairing_code WHERE approved_at IS NULL AND expires_at > ?
       ORDER BY first_at, code`,
      now,
    ).toArray().map((row) => ({
      code: String(row.code),
      platform: String(row.platform),
      user: String(row.user),
      name: String(row.name),
      first_message_at: new Date(Number(row.first_at)).toISOString(),
      expires_at: new Date(Number(row.expires_at)).toISOString(),
    }));
  }

  /** Paired users, most recently approved first. */
  paired(): PairedUser[] {
    return this.#sql.exec("SELECT * FROM paired_user ORDER BY approved_at DESC, platform, user")
      .toArray().map(_pairedUser);
  }

  #paired(platform: string, user: string): PairedUser | null {
    const row = this.#sql.exec(
      "SELECT * FROM paired_user WHERE platform = ? AND user = ?",
      platform,
      user,
    ).toArray()[0];
    return row ? _pairedUser(row) : null;
  }
}

function _pairedUser(row: Record<string, unknown>): PairedUser {
  return {
    platform: String(row.platform),
    user: String(row.user),
    name: String(row.name),
    approved_at: new Date(Number(row.approved_at)).toISOString(),
    approved_by: String(row.approved_by),
  };
}
