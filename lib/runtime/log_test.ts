// Unit tests for lib/runtime/log.ts: context fields, level filtering, redaction; Deno.
import { assert, assertEquals } from "@std/assert";
import { log, type LogLevel, setLogLevel, setLogSink, withLogFields } from "./log.ts";
import { withSessionContext } from "./session_context.ts";

/** Runs `fn` with lines captured instead of printed; returns them parsed. */
function captured(fn: () => void): { level: LogLevel; line: Record<string, unknown> }[] {
  const lines: { level: LogLevel; line: Record<string, unknown> }[] = [];
  const restore = setLogSink((level, text) => lines.push({ level, line: JSON.parse(text) }));
  try {
    fn();
  } finally {
    restore();
    setLogLevel("info");
  }
  return lines;
}

Deno.test("log adds the bound session context and log fields to every line", () => {
  const lines = captured(() =>
    withSessionContext(
      { session_key: "telegram:42", platform: "telegram", chat_id: "42", message_id: "7" },
      { user_name: "default-user" },
      () =>
        withLogFields({ seq: 3 }, () => withLogFields({ step: 2 }, () => log.info("step done"))),
    )
  );
  assertEquals(lines.length, 1);
  const { line } = lines[0];
  assertEquals(line.level, "info");
  assertEquals(line.message, "step done");
  assertEquals(line.session_key, "telegram:42");
  assertEquals(line.platform, "telegram");
  assertEquals(line.chat_id, "42");
  assertEquals(line.message_id, "7");
  assertEquals(line.user_name, "default-user");
  assertEquals(line.seq, 3);
  assertEquals(line.step, 2);
  assert(!Number.isNaN(Date.parse(String(line.time))));
});

Deno.test("log outside any frame writes only level, message, time and the given fields", () => {
  const lines = captured(() => log.warn("alarm not set", { ms: 5 }));
  assertEquals(Object.keys(lines[0].line).sort(), ["level", "message", "ms", "time"]);
  assertEquals(lines[0].level, "warn");
});

Deno.test("log drops lines below LOG_LEVEL; an unknown level means info", () => {
  const at = (level: string) =>
    captured(() => {
      setLogLevel(level);
      log.debug("d");
      log.info("i");
      log.warn("w");
      log.error("e");
    }).map((l) => l.line.message);
  assertEquals(at("debug"), ["d", "i", "w", "e"]);
  assertEquals(at("info"), ["i", "w", "e"]);
  assertEquals(at("warn"), ["w", "e"]);
  assertEquals(at("error"), ["e"]);
  assertEquals(at("loud"), ["i", "w", "e"]);
});

Deno.test("log redacts secret-named fields, nested ones and bound ones too", () => {
  const secret = "sk-live-123456";
  const lines = captured(() =>
    withLogFields({ api_key: secret }, () =>
      log.error("failed", {
        token: secret,
        Authorization: `Bearer ${secret}`,
        pairing_code: "493021",
        webhookSecret: secret,
        nested: { password: secret, list: [{ bot_token: secret }] },
        session_key: "api:abc",
        status_code: 502,
        error_code: 131047,
        error: new Error("boom"),
      }))
  );
  const text = JSON.stringify(lines[0].line);
  assert(!text.includes(secret), text);
  assert(!text.includes("493021"), text);
  assertEquals(lines[0].line.session_key, "api:abc");
  assertEquals(lines[0].line.status_code, 502);
  assertEquals(lines[0].line.error_code, 131047, "a platform's error code is no secret");
  assertEquals(lines[0].line.error, "Error: boom");
  assertEquals(lines[0].line.token, "[redacted]");
});
