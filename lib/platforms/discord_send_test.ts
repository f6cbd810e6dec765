// Unit tests for lib/platforms/discord.ts: webhook edits and follow-ups over a stubbed fetch; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import { replyChannel } from "../chat/mod.ts";
import { discordAdapter } from "./discord.ts";
import { withFetch } from "./_fetch_stub.ts";
import { APP_ID, discordFixtures, TOKEN } from "./_discord_fixtures.ts";

const { ENV } = discordFixtures(await discordTestKeys(), signDiscordRequest);

const TARGET = { platform: "discord", application_id: APP_ID, token: TOKEN } as const;
const SEND_ENV = { ...ENV, DISCORD_API_ROOT: "http://discord.test/api/" };

Deno.test("discordAdapter.send() edits @original for part 0 and posts follow-ups after", async () => {
  await withFetch(() => Response.json({ id: "m" }), async (calls) => {
    assertEquals(
      await discordAdapter.send(TARGET, "one", { index: 0, count: 2 }, SEND_ENV),
      { ok: true },
    );
    assertEquals(
      await discordAdapter.send(TARGET, "two", { index: 1, count: 2 }, SEND_ENV),
      { ok: true },
    );
    assertEquals(calls.map((c) => [c.method, c.url]), [
      ["PATCH", `http://discord.test/api/webhooks/${APP_ID}/${TOKEN}/messages/@original`],
      ["POST", `http://discord.test/api/webhooks/${APP_ID}/${TOKEN}`],
    ]);
    // An edit of @original clears any buttons a question left there.
    assertEquals(calls[0].body, {
      content: "one",
      allowed_mentions: { parse: [] },
      components: [],
    });
    assertEquals(calls[1].body, { content: "two", allowed_mentions: { parse: [] } });
    assertMatch(calls[0].headers.get("user-agent") ?? "", /^DiscordBot \(/);
  });
});

Deno.test("discordAdapter.send() defaults to the public Discord API root", async () => {
  await withFetch(() => Response.json({}), async (calls) => {
    await discordAdapter.send(TARGET, "x", { index: 0, count: 1 }, ENV);
    assertStrictEquals(
      calls[0].url,
      `https://discord.com/api/v10/webhooks/${APP_ID}/${TOKEN}/messages/@original`,
    );
  });
});

Deno.test("discordAdapter.send() reads retry_after on 429 as retryable for both kinds of part", async () => {
  await withFetch(
    () =>
      Response.json({ message: "You are being rate limited.", retry_after: 0.25, global: false }, {
        status: 429,
      }),
    async () => {
      for (const index of [0, 1]) {
        const result = await discordAdapter.send(TARGET, "x", { index, count: 2 }, SEND_ENV);
        assertEquals(result, {
          ok: false,
          status: 429,
          retryable: true,
          retryAfterMs: 250,
          message: "the Discord API answered 429",
        });
      }
    },
  );
});

Deno.test("discordAdapter.send() retries a 5xx or lost edit of @original but never a follow-up", async () => {
  await withFetch(() => new Response("oops", { status: 502 }), async () => {
    const edit = await discordAdapter.send(TARGET, "x", { index: 0, count: 2 }, SEND_ENV);
    assertStrictEquals(edit.ok === false && edit.retryable, true);
    const followUp = await discordAdapter.send(TARGET, "x", { index: 1, count: 2 }, SEND_ENV);
    assertStrictEquals(followUp.ok === false && followUp.retryable, false);
  });
  await withFetch(() => Promise.reject(new TypeError("network")), async () => {
    const edit = await discordAdapter.send(TARGET, "x", { index: 0, count: 2 }, SEND_ENV);
    assertStrictEquals(edit.ok === false && edit.retryable, true);
    const followUp = await discordAdapter.send(TARGET, "x", { index: 1, count: 2 }, SEND_ENV);
    assertStrictEquals(followUp.ok === false && followUp.retryable, false);
  });
});

Deno.test("discordAdapter.send() never retries 401/403/404 and keeps the token out of the message", async () => {
  for (const status of [401, 403, 404]) {
    await withFetch(
      () => Response.json({ message: "Invalid Webhook Token", code: 50027 }, { status }),
      async () => {
        for (const index of [0, 1]) {
          const result = await discordAdapter.send(TARGET, "x", { index, count: 2 }, SEND_ENV);
          assertStrictEquals(result.ok, false);
          if (result.ok) continue;
          assertStrictEquals(result.retryable, false);
          assertStrictEquals(result.status, status);
          assert(!result.message.includes(TOKEN));
          assert(!result.message.includes(APP_ID));
        }
      },
    );
  }
});

Deno.test("discordAdapter.send() replaces a blank first part and skips blank follow-ups", async () => {
  await withFetch(() => Response.json({}), async (calls) => {
    assertEquals(await discordAdapter.send(TARGET, "", { index: 0, count: 1 }, SEND_ENV), {
      ok: true,
    });
    assertEquals(await discordAdapter.send(TARGET, "  \n", { index: 1, count: 2 }, SEND_ENV), {
      ok: true,
    });
    assertStrictEquals(calls.length, 1);
    assertEquals(calls[0].body, {
      content: "(empty reply)",
      allowed_mentions: { parse: [] },
      components: [],
    });
  });
});

Deno.test("discordAdapter.replyTarget refuses a target without a token before any send", async () => {
  // Targets are checked once, where replies are sent: replyChannel() over the adapter's schema.
  await withFetch(() => Response.json({}), async (calls) => {
    const channel = replyChannel([discordAdapter], SEND_ENV);
    const result = await channel.send({ platform: "discord" }, "x", { index: 0, count: 1 });
    assertEquals(result.ok === false && result.retryable, false);
    assertStrictEquals(result.ok, false);
    assertStrictEquals(calls.length, 0);
  });
});
