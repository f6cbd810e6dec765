// The web console as static assets of the Worker in workerd: served at /, the API still reached, its size; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { gzipSync } from "node:zlib";
import { API_KEY, json, withBaton } from "./_support/clients.ts";
import { buildConsoleAssets } from "./_support/worker.ts";

/** The budget the issue sets for everything the console page loads, gzipped. */
const MAX_GZIPPED_BYTES = 60 * 1024;

Deno.test("console: GET / serves the page and its bundle; /v1/*, /webhooks/* and /healthz still reach the Worker", async () => {
  await withBaton(async (worker) => {
    const page = await worker.fetch("/");
    assertStrictEquals(page.status, 200);
    assertMatch(page.headers.get("content-type") ?? "", /^text\/html/);
    const html = await page.text();
    assertMatch(html, /<script type="module" src="\/console\.js"><\/script>/);
    // Nothing from another origin: no CDN, no external font.
    assert(!/(src|href)="(https?:)?\/\//.test(html), html);
    const script = await worker.fetch("/console.js");
    assertStrictEquals(script.status, 200);
    assertMatch(script.headers.get("content-type") ?? "", /javascript/);
    assert(
      !/https?:\/\/(?!www\.w3\.org)/.test(await script.text()),
      "the bundle names no other origin",
    );

    assertEquals(await json(await worker.fetch("/healthz")), { ok: true });
    const models = await worker.fetch("/v1/models", {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertStrictEquals(models.status, 200);
    await models.body?.cancel();
    const hook = await worker.fetch("/webhooks/generic", { method: "POST", body: "{}" });
    assertStrictEquals(hook.status, 401);
    await hook.body?.cancel();
    const missing = await worker.fetch("/no-such-page");
    assertStrictEquals(missing.status, 404);
    assertEquals((await json(missing)).error.type, "not_found");
  });
});

Deno.test("console: the built page, script and styles are under 60 KB gzipped", async () => {
  const dir = await buildConsoleAssets();
  let total = 0;
  for (const name of ["index.html", "console.js", "console.css"]) {
    total += gzipSync(await Deno.readFile(`${dir}/${name}`)).byteLength;
  }
  assert(total < MAX_GZIPPED_BYTES, `${total} bytes gzipped`);
});
