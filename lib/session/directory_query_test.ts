// Unit tests for lib/session/directory_query.ts: parameters and cursors of GET /v1/sessions; Deno.
import { assertEquals } from "@std/assert";
import { decodeCursor, encodeCursor, parseDirectoryQuery } from "./directory_query.ts";

Deno.test("parseDirectoryQuery() fills defaults and reads every parameter", () => {
  assertEquals(parseDirectoryQuery({}), {
    limit: 20,
    order: "created",
    cursor: null,
    platform: null,
    status: null,
  });
  const cursor = encodeCursor({ order: "activity", at: 1_700_000_000_123, key: "api:ü/+x" });
  assertEquals(
    parseDirectoryQuery({
      limit: "100",
      cursor,
      platform: "telegram",
      status: "queued",
      order: "activity",
    }),
    {
      limit: 100,
      order: "activity",
      cursor: { order: "activity", at: 1_700_000_000_123, key: "api:ü/+x" },
      platform: "telegram",
      status: "queued",
    },
  );
});

Deno.test("parseDirectoryQuery() names the bad parameter", () => {
  const bad = (params: Record<string, string>) => String(parseDirectoryQuery(params)).split(":")[0];
  assertEquals(bad({ limit: "0" }), "limit");
  assertEquals(bad({ limit: "101" }), "limit");
  assertEquals(bad({ limit: "ten" }), "limit");
  assertEquals(bad({ limit: "-1" }), "limit");
  assertEquals(bad({ status: "done" }), "status");
  assertEquals(bad({ order: "title" }), "order");
  assertEquals(bad({ cursor: "not-a-cursor" }), "cursor");
  assertEquals(bad({ cursor: btoa(JSON.stringify({ o: "created", t: -1, k: "x" })) }), "cursor");
  const created = encodeCursor({ order: "created", at: 1, key: "k" });
  assertEquals(bad({ cursor: created, order: "activity" }), "cursor");
});

Deno.test("decodeCursor() reverses encodeCursor() and refuses anything else", () => {
  const cursor = { order: "created" as const, at: 42, key: "telegram:1:2" };
  assertEquals(decodeCursor(encodeCursor(cursor)), cursor);
  assertEquals(decodeCursor("%%%"), null);
  assertEquals(decodeCursor(btoa("[]")), null);
});
