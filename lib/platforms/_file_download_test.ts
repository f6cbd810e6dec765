// Tests for downloads of platform file links: only the platform's hosts, redirects checked hop by hop, the credential never sent elsewhere, Slack's sign-in page refused; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { downloadFromPlatform, onPlatformHosts } from "./_file_download.ts";
import { fetchSlackMedia } from "./slack_media.ts";
import { withFetch } from "./_fetch_stub.ts";

const HOSTS = ["slack.com", "slack-files.com"];
const ROOT = "https://slack.com/api";
const TOKEN = "xoxb-secret-token";

function options(signal = new AbortController().signal) {
  return {
    api: "Slack file server",
    hosts: HOSTS,
    root: ROOT,
    headers: { authorization: `Bearer ${TOKEN}` },
    maxBytes: 1000,
    signal,
    secrets: [TOKEN],
  };
}

Deno.test("onPlatformHosts() takes the hosts and their subdomains over https, and the API root's origin", () => {
  assert(onPlatformHosts("https://files.slack.com/files-pri/T1-F1/a.png", HOSTS, ROOT));
  assert(onPlatformHosts("https://slack-files.com/x", HOSTS, ROOT));
  assert(onPlatformHosts("http://127.0.0.1:9/f", HOSTS, "http://127.0.0.1:9/api"));
  assert(!onPlatformHosts("http://files.slack.com/a.png", HOSTS, ROOT), "not over http");
  assert(!onPlatformHosts("https://evilslack.com/a.png", HOSTS, ROOT), "a look-alike");
  assert(!onPlatformHosts("https://slack.com.evil.example/a", HOSTS, ROOT));
  assert(!onPlatformHosts("https://u:p@files.slack.com/a", HOSTS, ROOT), "credentials in the URL");
  assert(!onPlatformHosts("not a url", HOSTS, ROOT));
});

Deno.test("downloadFromPlatform() refuses a link off the platform's hosts before any request", async () => {
  await withFetch(() => new Response("x"), async (calls) => {
    const got = await downloadFromPlatform("https://attacker.example/steal", options());
    assertEquals(got, {
      ok: false,
      why: "download failed: the link is not on the Slack file server",
    });
    assertStrictEquals(calls.length, 0);
  });
});

Deno.test("downloadFromPlatform() follows a redirect onto the hosts with the credential, and refuses one off them without sending it there", async () => {
  const bytes = new Uint8Array([1, 2, 3]);
  await withFetch((call) => {
    if (call.url === "https://files.slack.com/a") {
      return new Response(null, {
        status: 302,
        headers: { location: "https://slack-files.com/b" },
      });
    }
    if (call.url === "https://slack-files.com/b") return new Response(bytes);
    if (call.url === "https://files.slack.com/away") {
      return new Response(null, { status: 302, headers: { location: "https://cdn.example/c" } });
    }
    return new Response("leaked", { status: 200 });
  }, async (calls) => {
    const got = await downloadFromPlatform("https://files.slack.com/a", options());
    assertEquals(got, { ok: true, bytes });
    assertEquals(calls.map((c) => c.headers.get("authorization")), [
      `Bearer ${TOKEN}`,
      `Bearer ${TOKEN}`,
    ]);
    assert(calls.every((c) => c.init.redirect === "manual"), "redirects followed by hand");
    const away = await downloadFromPlatform("https://files.slack.com/away", options());
    assertEquals(away, { ok: false, why: "download failed: the Slack file server answered 302" });
    assert(!calls.some((c) => c.url.startsWith("https://cdn.example")), "never asked off Slack");
  });
});

Deno.test("fetchSlackMedia() answers Slack's sign-in page (a token without files:read) as a failure, not a file", async () => {
  const page = "\n<!DOCTYPE html><html><head><title>Slack</title></head></html>";
  await withFetch(
    () => new Response(page, { headers: { "content-type": "text/html" } }),
    async () => {
      const got = await fetchSlackMedia(
        { platform: "slack", file: "https://files.slack.com/files-pri/T1-F1/a.png", kind: "photo" },
        { SLACK_BOT_TOKEN: TOKEN },
        { signal: new AbortController().signal, maxBytes: 1000 },
      );
      assertStrictEquals(got.ok, false);
      assert(
        !got.ok && /files:read/.test(got.why) && !got.why.includes(TOKEN),
        JSON.stringify(got),
      );
    },
  );
});
