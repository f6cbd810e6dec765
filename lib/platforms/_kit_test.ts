// Unit tests of the adapter kit: time window, answers, and sendRequest over a loopback HTTP server; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import {
  type Answer,
  apiRoot,
  bodyRetryAfter,
  detail,
  formField,
  ignore,
  isFormBody,
  jsonField,
  parametersRetryAfter,
  redact,
  respond,
  retryAfterHeader,
  type SendOptions,
  sendRequest,
  timestampProblem,
} from "./_kit.ts";
import type { SendResult } from "../chat/mod.ts";

const TOKEN = "123456789:AAE-kit_test_secret_part";
const SECRET_HALF = TOKEN.slice(TOKEN.indexOf(":") + 1);
const NOW = 1_700_000_000;
const encoder = new TextEncoder();

Deno.test("timestampProblem() accepts exactly ±300 s and refuses ±301 s", () => {
  for (const skew of [0, -300, 300]) {
    assertStrictEquals(timestampProblem(String(NOW + skew), NOW), null, String(skew));
  }
  for (const skew of [-301, 301, -86_400]) {
    assertStrictEquals(timestampProblem(String(NOW + skew), NOW), "outside", String(skew));
  }
});

Deno.test("timestampProblem() refuses non-digits and unsafe integers", () => {
  for (const value of ["", "17e8", "-1", "+1700000000", "1700000000.5", " 1700000000", "0x10"]) {
    assertStrictEquals(timestampProblem(value, NOW), "malformed", JSON.stringify(value));
  }
  // 2^53 + 2 and longer: not one second any more, even when "near" a huge now.
  const unsafe = "9007199254740994";
  assertStrictEquals(timestampProblem(unsafe, Number(unsafe)), "outside");
  assertStrictEquals(timestampProblem("9".repeat(400), NOW), "outside");
  assertStrictEquals(timestampProblem("0001700000000", NOW), null);
});

Deno.test("ignore() and respond() build 200 answers that start nothing", () => {
  assertEquals(ignore(), { kind: "respond", status: 200, body: { ok: true } });
  assertEquals(ignore("event push"), {
    kind: "respond",
    status: 200,
    body: { ok: true, ignored: "event push" },
  });
  assertEquals(respond({ type: 1 }), { kind: "respond", status: 200, body: { type: 1 } });
  assertEquals(respond(null, 202), { kind: "respond", status: 202, body: null });
});

Deno.test("apiRoot() prefers a set env value and strips trailing slashes", () => {
  assertStrictEquals(apiRoot({}, "X_API_ROOT", "https://x.test/api/"), "https://x.test/api");
  assertStrictEquals(apiRoot({ X_API_ROOT: "" }, "X_API_ROOT", "https://x.test"), "https://x.test");
  assertStrictEquals(
    apiRoot({ X_API_ROOT: "http://127.0.0.1:9//" }, "X_API_ROOT", "https://x.test"),
    "http://127.0.0.1:9",
  );
});

Deno.test("jsonField() walks own object keys only", () => {
  const body = { a: { b: 3 }, list: [1], n: null };
  assertStrictEquals(jsonField(body, "a", "b"), 3);
  assertStrictEquals(jsonField(body, "a", "c"), undefined);
  assertStrictEquals(jsonField(body, "list", "0"), undefined);
  assertStrictEquals(jsonField(body, "n", "x"), undefined);
  assertStrictEquals(jsonField("text", "length"), undefined);
  assertStrictEquals(jsonField({}, "toString"), undefined);
  assertStrictEquals(jsonField(body), body);
});

Deno.test("isFormBody() and formField() read form bodies, refusing bytes that are not UTF-8", () => {
  const form = (type: string) => new Headers({ "content-type": type });
  assert(isFormBody(form("application/x-www-form-urlencoded; charset=utf-8")));
  assert(isFormBody(form("Application/X-WWW-Form-Urlencoded")));
  assert(!isFormBody(form("application/json")));
  assert(!isFormBody(new Headers()));
  assertStrictEquals(formField(encoder.encode("ssl_check=1&token=t"), "ssl_check"), "1");
  assertStrictEquals(formField(encoder.encode("a=%7B%7D"), "a"), "{}");
  assertStrictEquals(formField(encoder.encode("a=1"), "b"), null);
  assertStrictEquals(formField(new Uint8Array([0x61, 0x3d, 0xff]), "a"), null);
});

Deno.test("redact() replaces every secret, longest first, and detail() cuts to 200", () => {
  assertStrictEquals(
    redact(`bot${TOKEN} and ${SECRET_HALF}`, [SECRET_HALF, TOKEN, ""]),
    "bot<token> and <token>",
  );
  assertStrictEquals(detail("x".repeat(300)), `: ${"x".repeat(200)}`);
  assertStrictEquals(detail(""), "");
  assertStrictEquals(detail(42), "");
});

// ── sendRequest() against a real HTTP server on loopback ───────────────────────────────────────

interface _Seen {
  method: string;
  path: string;
  body: string;
}

/** Serves `answer` on 127.0.0.1 (port 0) for the length of `fn`, recording each request; with `holdUntil`, only once it settles. */
async function _withServer(
  answer: (seen: _Seen) => Response,
  fn: (root: string, seen: _Seen[]) => Promise<void>,
  holdUntil?: Promise<void>,
): Promise<void> {
  const seen: _Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const call = { method: req.method, path: new URL(req.url).pathname, body: await req.text() };
    seen.push(call);
    await holdUntil;
    return answer(call);
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, seen);
  } finally {
    await server.shutdown();
  }
}

/** A loopback URL nothing listens on: a server is started for a free port, then stopped. */
async function _closedRoot(): Promise<string> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(),
  );
  const port = server.addr.port;
  await server.shutdown();
  return `http://127.0.0.1:${port}`;
}

const _POST = { method: "POST", body: '{"text":"hi"}' };
const _TELEGRAM: SendOptions = {
  leaving: undefined,
  api: "Telegram Bot API",
  secrets: [TOKEN, SECRET_HALF],
  refused: ({ body }) => jsonField(body, "ok") === false,
  waitFrom: [parametersRetryAfter, retryAfterHeader],
  describe: ({ status, body }) =>
    `Telegram sendMessage answered ${status}${detail(jsonField(body, "description"))}`,
};

const _IDEMPOTENT: SendOptions = { api: "Discord API", idempotent: true, leaving: undefined };

function _assertNoSecret(result: SendResult): void {
  const text = JSON.stringify(result);
  assert(!text.includes(SECRET_HALF), text);
  // No half of the secret either: a cut at 200 characters must not keep a piece of it.
  assert(!text.includes(SECRET_HALF.slice(0, 8)), text);
}

Deno.test("sendRequest() sends the request and maps a 2xx to ok", async () => {
  await _withServer(() => Response.json({ ok: true }), async (root, seen) => {
    const result = await sendRequest(`${root}/bot${TOKEN}/sendMessage`, _POST, _TELEGRAM);
    assertEquals(result, { ok: true });
    assertEquals(seen, [{ method: "POST", path: `/bot${TOKEN}/sendMessage`, body: _POST.body }]);
  });
});

Deno.test("sendRequest() calls leaving just before the request leaves", async () => {
  const order: string[] = [];
  await _withServer(() => {
    order.push("request arrived");
    return Response.json({ ok: true });
  }, async (root) => {
    const leaving = () => void order.push("leaving");
    assertEquals(await sendRequest(`${root}/x`, _POST, { ..._TELEGRAM, leaving }), { ok: true });
  });
  assertEquals(order, ["leaving", "request arrived"]);
});

Deno.test("sendRequest() treats a connection error as in doubt, or retryable if idempotent, and never shows the token", async () => {
  const root = await _closedRoot();
  const result = await sendRequest(`${root}/bot${TOKEN}/sendMessage`, _POST, _TELEGRAM);
  const message = "could not reach the Telegram Bot API";
  assertEquals(result, { ok: false, status: 0, retryable: false, uncertain: true, message });
  _assertNoSecret(result);
  // An edit cannot post twice: a lost one may be repeated.
  const edit = await sendRequest(`${root}/edit`, { method: "PATCH" }, {
    ..._TELEGRAM,
    idempotent: true,
  });
  assert(!edit.ok && edit.retryable && edit.status === 0);
});

Deno.test("sendRequest() redacts the token from a 4xx description, even one cut to 200 characters", async () => {
  // The token straddles character 200 of the description: cutting before redacting would leak half.
  const description = `${"x".repeat(176)} bot${TOKEN} and again ${SECRET_HALF}`;
  await _withServer(
    () => Response.json({ ok: false, description, nested: [{ echo: TOKEN }] }, { status: 401 }),
    async (root) => {
      const result = await sendRequest(`${root}/bot${TOKEN}/sendMessage`, _POST, _TELEGRAM);
      assert(!result.ok);
      assertEquals([result.status, result.retryable], [401, false]);
      assert(
        result.message.startsWith(
          `Telegram sendMessage answered 401: ${"x".repeat(176)} bot<token>`,
        ),
      );
      _assertNoSecret(result);
    },
  );
});

Deno.test("sendRequest() redacts a secret the describe callback writes itself", async () => {
  await _withServer(() => new Response("no", { status: 400 }), async (root) => {
    const describe = () => `failed at /bot${TOKEN}/x`;
    const result = await sendRequest(`${root}/x`, _POST, { ..._TELEGRAM, describe });
    assert(!result.ok && result.message === "failed at /bot<token>/x", JSON.stringify(result));
  });
});

Deno.test("sendRequest() honours a Retry-After header on a 429", async () => {
  await _withServer(
    () => new Response("slow down", { status: 429, headers: { "retry-after": "2" } }),
    async (root) => {
      const result = await sendRequest(`${root}/x`, _POST, {
        leaving: undefined,
        api: "Slack API",
      });
      assertEquals(result, {
        ok: false,
        status: 429,
        retryable: true,
        retryAfterMs: 2000,
        message: "the Slack API answered 429",
      });
    },
  );
});

Deno.test("sendRequest() reads the wait from the body where the platform puts it, before the header", async () => {
  const headers = { "retry-after": "9" };
  await _withServer(
    () => Response.json({ ok: false, parameters: { retry_after: 3 } }, { status: 429, headers }),
    async (root) => {
      const result = await sendRequest(`${root}/x`, _POST, _TELEGRAM);
      assert(!result.ok && result.retryable);
      assertStrictEquals(result.retryAfterMs, 3000);
    },
  );
  await _withServer(
    () => Response.json({ retry_after: 0.25, global: false }, { status: 429, headers }),
    async (root) => {
      const waitFrom = [bodyRetryAfter, retryAfterHeader];
      const result = await sendRequest(`${root}/x`, _POST, {
        leaving: undefined,
        api: "Discord API",
        waitFrom,
      });
      assert(!result.ok && result.retryable);
      assertStrictEquals(result.retryAfterMs, 250);
    },
  );
  await _withServer(
    () => Response.json({ retry_after: "soon" }, { status: 429, headers }),
    async (root) => {
      const waitFrom = [bodyRetryAfter, retryAfterHeader];
      const result = await sendRequest(`${root}/x`, _POST, {
        leaving: undefined,
        api: "Discord API",
        waitFrom,
      });
      assert(!result.ok && result.retryAfterMs === 9000, "an unusable source is passed over");
    },
  );
});

Deno.test("sendRequest() leaves the wait to the caller, or to defaultWaitMs, when a 429 names none", async () => {
  await _withServer(() => new Response(null, { status: 429 }), async (root) => {
    const bare = await sendRequest(`${root}/x`, _POST, { leaving: undefined, api: "Slack API" });
    const message = "the Slack API answered 429";
    assertEquals(bare, { ok: false, status: 429, retryable: true, message });
    const options = { leaving: undefined, api: "GitHub API", defaultWaitMs: 60_000 };
    const fallback = await sendRequest(`${root}/x`, _POST, options);
    assert(!fallback.ok && fallback.retryAfterMs === 60_000);
  });
});

Deno.test("sendRequest() uses the platform's rule for what counts as rate-limited", async () => {
  const rateLimited = ({ status, headers }: Answer) =>
    status === 403 && headers.get("x-ratelimit-remaining") === "0";
  await _withServer(
    () => new Response(null, { status: 403, headers: { "x-ratelimit-remaining": "0" } }),
    async (root) => {
      const result = await sendRequest(`${root}/x`, _POST, {
        leaving: undefined,
        api: "GitHub API",
        rateLimited,
        describe: (a, kind) => `${kind} ${a.status}`,
      });
      const message = "rate-limited 403";
      assertEquals(result, { ok: false, status: 403, retryable: true, message });
    },
  );
  await _withServer(() => new Response(null, { status: 403 }), async (root) => {
    const result = await sendRequest(`${root}/x`, _POST, {
      leaving: undefined,
      api: "GitHub API",
      rateLimited,
    });
    assert(!result.ok && !result.retryable);
  });
});

Deno.test("sendRequest() retries a 5xx only when idempotent (else it is in doubt), and never another 4xx", async () => {
  await _withServer(() => new Response("bad gateway", { status: 502 }), async (root) => {
    const post = await sendRequest(`${root}/x`, _POST, { leaving: undefined, api: "Discord API" });
    const message = "the Discord API answered 502";
    assertEquals(post, { ok: false, status: 502, retryable: false, uncertain: true, message });
    const edit = await sendRequest(`${root}/x`, { method: "PATCH" }, _IDEMPOTENT);
    assert(!edit.ok && edit.retryable && edit.retryAfterMs === undefined);
  });
  await _withServer(() => new Response(null, { status: 404 }), async (root) => {
    const edit = await sendRequest(`${root}/x`, { method: "PATCH" }, _IDEMPOTENT);
    assert(!edit.ok && !edit.retryable && edit.uncertain === undefined, "a 4xx is final");
  });
});

Deno.test("sendRequest() turns a refused 2xx into a final failure worded by the platform", async () => {
  await _withServer(
    () => Response.json({ ok: false, error: "channel_not_found" }),
    async (root) => {
      const result = await sendRequest(`${root}/x`, _POST, {
        leaving: undefined,
        api: "Slack API",
        idempotent: true,
        refused: ({ body }) => jsonField(body, "ok") !== true,
        describe: ({ body }, kind) => `${kind}: ${jsonField(body, "error")}`,
      });
      assertEquals(result, {
        ok: false,
        status: 200,
        retryable: false,
        message: "refused: channel_not_found",
      });
    },
  );
  await _withServer(() => new Response("<html>not json</html>"), async (root) => {
    const result = await sendRequest(`${root}/x`, _POST, {
      leaving: undefined,
      api: "Slack API",
      refused: ({ body }) => body === undefined,
    });
    assert(!result.ok && result.message === "the Slack API answered 200");
  });
});

Deno.test("sendRequest() gives up on an API that never answers by its deadline: in doubt, or retryable if idempotent", async () => {
  // The server holds every request until the test ends; without a deadline the send would wait
  // for ever (the guard below turns that hang into a failure).
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  await _withServer(() => new Response("late"), async (root) => {
    const hang = (options: SendOptions) =>
      Promise.race([
        sendRequest(`${root}/bot${TOKEN}/sendMessage`, _POST, options),
        held.then(() => "no answer" as const),
      ]);
    const guard = setTimeout(release, 20_000);
    try {
      const post = await hang({ ..._TELEGRAM, timeoutMs: 50 });
      const message = "the Telegram Bot API did not answer within 50 ms";
      assertEquals(post, { ok: false, status: 0, retryable: false, uncertain: true, message });
      const edit = await hang({ ..._IDEMPOTENT, timeoutMs: 50 });
      assert(edit !== "no answer" && !edit.ok && edit.retryable && !edit.uncertain, String(edit));
    } finally {
      clearTimeout(guard);
      release();
    }
  }, held);
});
