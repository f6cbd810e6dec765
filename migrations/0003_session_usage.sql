-- Each session's tokens per UTC day (D1 binding DIRECTORY), written with its directory row by its session object: GET /v1/usage lists and sums these rows.
-- cost is in MODEL_PRICES' currency (0 when unpriced). Sums never move back (the writer keeps the largest). Idempotent, like 0001 (CREATE … IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS session_usage (
  key TEXT NOT NULL,
  day TEXT NOT NULL,
  tenant TEXT,
  platform TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  cached_tokens INTEGER NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (key, day)
);
CREATE INDEX IF NOT EXISTS session_usage_day ON session_usage (day, tenant);
