// Unit tests for lib/platforms/discord.ts: Ed25519 signature and timestamp verification; Deno.
import { assert, assertMatch, assertStrictEquals } from "@std/assert";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import { discordAdapter } from "./discord.ts";
import { discordFixtures, NOW } from "./_discord_fixtures.ts";

const { ENV, PUBLIC_KEY, signed } = discordFixtures(await discordTestKeys(), signDiscordRequest);

Deno.test("discordAdapter.verify() accepts a signature over timestamp + raw body", async () => {
  assertStrictEquals(await discordAdapter.verify(await signed({ type: 1 }), ENV), null);
});

Deno.test("discordAdapter.verify() refuses a signature by another key", async () => {
  const otherKey = (await discordTestKeys()).publicKeyHex;
  const refusal = await discordAdapter.verify(await signed({ type: 1 }), {
    ...ENV,
    DISCORD_PUBLIC_KEY: otherKey,
  });
  assertStrictEquals(refusal, "X-Signature-Ed25519 does not match");
});

Deno.test("discordAdapter.verify() refuses a body changed after signing", async () => {
  const request = await signed({ type: 1 });
  const tampered = { ...request, body: new TextEncoder().encode('{"type":1 }') };
  assertStrictEquals(
    await discordAdapter.verify(tampered, ENV),
    "X-Signature-Ed25519 does not match",
  );
});

Deno.test("discordAdapter.verify() refuses a signature over a different timestamp", async () => {
  const request = await signed({ type: 1 });
  request.headers.set("x-signature-timestamp", String(NOW + 1));
  assertStrictEquals(
    await discordAdapter.verify(request, ENV),
    "X-Signature-Ed25519 does not match",
  );
});

Deno.test("discordAdapter.verify() refuses missing headers", async () => {
  const request = await signed({ type: 1 });
  for (const name of ["x-signature-ed25519", "x-signature-timestamp"]) {
    const headers = new Headers(request.headers);
    headers.delete(name);
    assertMatch(
      String(await discordAdapter.verify({ ...request, headers }, ENV)),
      /^missing X-Signature-Ed25519 or X-Signature-Timestamp header$/,
    );
  }
});

Deno.test("discordAdapter.verify() refuses malformed hex signatures", async () => {
  const good = (await signed({ type: 1 })).headers.get("x-signature-ed25519")!;
  for (const signature of ["zz" + good.slice(2), good.slice(2), good + "00", "", "0".repeat(128)]) {
    const refusal = await discordAdapter.verify(await signed({ type: 1 }, { signature }), ENV);
    assert(refusal, `refused: ${signature.slice(0, 8)}…`);
  }
});

Deno.test("discordAdapter.verify() refuses timestamps outside ±5 minutes", async () => {
  for (const skew of [-301, 301]) {
    const request = await signed({ type: 1 }, { timestamp: String(NOW + skew) });
    assertStrictEquals(
      await discordAdapter.verify(request, ENV),
      "X-Signature-Timestamp is outside ±300s of now",
    );
  }
  for (const skew of [-300, 300]) {
    const request = await signed({ type: 1 }, { timestamp: String(NOW + skew) });
    assertStrictEquals(await discordAdapter.verify(request, ENV), null);
  }
  const request = await signed({ type: 1 }, { timestamp: `${NOW}.5` });
  assertStrictEquals(
    await discordAdapter.verify(request, ENV),
    "X-Signature-Timestamp is not a number of seconds",
  );
});

Deno.test("discordAdapter.verify() refuses when DISCORD_PUBLIC_KEY is not 32 bytes of hex", async () => {
  for (const key of ["nothex", PUBLIC_KEY.slice(2), PUBLIC_KEY + "00"]) {
    const refusal = await discordAdapter.verify(await signed({ type: 1 }), {
      ...ENV,
      DISCORD_PUBLIC_KEY: key,
    });
    assertStrictEquals(refusal, "DISCORD_PUBLIC_KEY is not a 32-byte hex Ed25519 public key");
  }
});
