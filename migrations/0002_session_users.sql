-- The chat user of each direct (one-to-one) platform session, written with its directory row: DELETE /v1/users/{platform:user} finds the sessions to erase here.
-- Group chats and API sessions have none. Idempotent, like 0001 (CREATE … IF NOT EXISTS).
CREATE TABLE IF NOT EXISTS session_user (
  platform TEXT NOT NULL,
  user TEXT NOT NULL,
  key TEXT NOT NULL,
  PRIMARY KEY (platform, user, key)
);
CREATE INDEX IF NOT EXISTS session_user_key ON session_user (key);
