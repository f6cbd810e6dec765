// The web console's data views in real Chromium against `wrangler dev`: images and files in chat and inspector, compactions, a day's usage, a user's memory; Deno.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { type Browser, chromium, type Page } from "playwright-core";
import { freePort, startWranglerDev, type WranglerDev } from "../scripts/_wrangler_dev.ts";
import type { Json } from "./_support/clients.ts";
import {
  type FakeModelRequest,
  type FakeModelStep,
  startFakeModel,
} from "../lib/testing/fake_model.ts";
import { startFakePlatform } from "./_support/fake_platform.ts";
import { tempPersistDir } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import { costText } from "../functions/console/usage_text.ts";

/** Debian's chromium (`.ci/run` installs it when missing). */
const CHROMIUM = "/usr/bin/chromium";
const KEY = "console-data-key";
const TG_SECRET = "tg-console-data-secret";
const TG_TOKEN = "123456789:AAH-console_data_token";

/** A 1×1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const NOTES = "Meeting notes: ship on Friday.\n";

function _hasChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/** The fake model: "remember tea" calls `remember`; everything else is echoed, with usage. */
function script(req: FakeModelRequest): FakeModelStep {
  const last = req.body.messages.at(-1);
  const usage = { prompt_tokens: 1200, completion_tokens: 300 };
  if (last?.role === "tool") return { kind: "text", text: "noted", usage };
  if (req.lastUserText === "remember tea") {
    return { kind: "tool_call", name: "remember", args: { fact: "likes green tea" }, usage };
  }
  return { kind: "text", text: `echo: ${req.lastUserText}`, usage };
}

/** Polls `check` until true (20 s at most): the UI and the server settle at their own pace. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Logs in with the key by keyboard. */
async function login(page: Page): Promise<void> {
  await page.locator("#api-key").focus();
  await page.keyboard.type(KEY);
  await page.keyboard.press("Enter");
  await page.locator(".sessions").waitFor();
}

/** Clicks Refresh until `locator`'s count is above 0: data the server writes just after a turn. */
async function refreshUntil(page: Page, selector: string): Promise<void> {
  await until(async () => {
    if (await page.locator(selector).count()) return true;
    await page.locator("button", { hasText: "Refresh" }).click();
    return false;
  });
}

Deno.test({
  name:
    "console: in Chromium — media in chat and inspector, compactions, a day's usage, a user's memory",
  ignore: !_hasChromium(),
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const fake = await startFakeModel();
  fake.script(script);
  const telegram = await startFakePlatform();
  const state = await tempPersistDir();
  let dev: WranglerDev | undefined;
  let browser: Browser | undefined;
  try {
    dev = await startWranglerDev({
      port: freePort(),
      inspectorPort: freePort(),
      persistDir: `${state.path}/state`,
      logFile: `${state.path}/wrangler.log`,
      vars: {
        LLM_BASE_URL: fake.url,
        LLM_API_KEY: "sk-test",
        LLM_MAX_RETRIES: "0",
        GATEWAY_API_KEY: KEY,
        ACCESS_POLICY: "open",
        MEMORY: "on",
        MODEL_PRICES: JSON.stringify({ "*": { in: 2, out: 8 } }),
        TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
        TELEGRAM_BOT_TOKEN: TG_TOKEN,
        TELEGRAM_API_ROOT: telegram.url,
      },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox"],
    });
    const url = dev.url;
    const api = async (path: string, init: RequestInit = {}, headers = {}): Promise<Json> => {
      const res = await fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
      });
      const body = await res.json();
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      return body;
    };
    const chat = (session: string, content: unknown) =>
      api("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content }] }),
      }, { "x-session-id": session });
    let updates = 800_000;
    /** A private Telegram message from user (and chat) `id`, as Telegram posts it. */
    const telegramSays = async (id: number, text: string) => {
      const res = await fetch(`${url}/webhooks/telegram`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "X-Telegram-Bot-Api-Secret-Token": TG_SECRET,
        },
        body: JSON.stringify({
          update_id: ++updates,
          message: {
            message_id: updates,
            date: Math.floor(Date.now() / 1000),
            chat: { id, type: "private", first_name: "Bo" },
            from: { id, is_bot: false, first_name: "Bo" },
            text,
          },
        }),
      });
      assertStrictEquals(res.status, 200);
      await res.body?.cancel();
    };
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    const page = await context.newPage();
    await page.goto(url);
    await login(page);

    await t.step(
      "console: an image shows inline and a file as a named link, in chat and inspector",
      async () => {
        await chat("console-media", [
          { type: "text", text: "see these" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          {
            type: "file",
            file: {
              filename: "notes.txt",
              file_data: `data:text/plain;base64,${encodeBase64(new TextEncoder().encode(NOTES))}`,
            },
          },
        ]);
        await page.goto(`${url}/#/chat/api%3Aconsole-media`);
        const image = page.locator(".bubble.user img.medium-image");
        await image.waitFor();
        // Loaded: its bytes came through the key-guarded route as an object URL, not a keyed URL.
        await until(async () =>
          await page.evaluate<number>(
            `document.querySelector(".bubble.user img.medium-image")?.naturalWidth ?? 0`,
          ) === 1
        );
        assertMatch(await image.getAttribute("src") ?? "", /^blob:/);
        const file = page.locator(".bubble.user .medium-file");
        assertEquals(
          (await file.textContent())?.replace(/\s+/g, " "),
          `notes.txt (text/plain, ${NOTES.length} B)`,
        );
        // The file is saved under its name when opened.
        const [download] = await Promise.all([page.waitForEvent("download"), file.click()]);
        assertStrictEquals(download.suggestedFilename(), "notes.txt");
        await page.goto(`${url}/#/inspect/api%3Aconsole-media`);
        await page.locator(".transcript-rows img.medium-image").waitFor();
        await page.locator(".transcript-rows .medium-file", { hasText: "notes.txt" }).waitFor();
        assert(!page.url().includes(KEY));
      },
    );

    await t.step("console: a medium no longer stored shows its placeholder", async () => {
      // The route's answer for a medium retention deleted (404 media_expired).
      await page.route("**/media/**", (route) =>
        route.fulfill({
          status: 404,
          contentType: "application/json",
          body: JSON.stringify({
            error: { message: "the medium is no longer stored", type: "media_expired" },
          }),
        }));
      await page.goto(`${url}/#/chat/api%3Aconsole-media`);
      await page.reload();
      await page.locator(".bubble.user .medium-gone", {
        hasText: `[image: image/png, ${atob(PNG).length} B]`,
      })
        .waitFor();
      await page.unroute("**/media/**");
    });

    await t.step(
      "console: the inspector shows a summary with its range, the originals still listed",
      async () => {
        // A chat's /compact (API messages carry no commands), each message once the one before is answered.
        const session = "/v1/sessions/telegram%3A5151";
        for (const [i, text] of ["first question", "second question"].entries()) {
          await telegramSays(5151, text);
          await until(async () =>
            (await api(session).catch(() => ({ messages: [] }))).messages.length === 2 * (i + 1)
          );
        }
        await telegramSays(5151, "/compact");
        await until(async () => (await api(session)).compactions?.length === 1);
        const [compaction] = (await api(session)).compactions;
        await page.goto(`${url}/#/inspect/telegram%3A5151`);
        const summary = page.locator(".transcript-rows .summary");
        await summary.waitFor();
        assertStrictEquals(await summary.count(), 1);
        assertStrictEquals(
          (await summary.locator(".range").textContent())?.replace(/\s+/g, " "),
          `messages ${compaction.from + 1}–${
            compaction.through + 1
          } (${compaction.messages} summarised)`,
        );
        assertStrictEquals(await summary.locator(".text").textContent(), compaction.summary);
        // Every original is still listed; those it covers are marked.
        const originals = await page.locator(".transcript-rows .original .text").allTextContents();
        assertEquals(originals.slice(0, 4), [
          "first question",
          "echo: first question",
          "second question",
          "echo: second question",
        ]);
        assertStrictEquals(
          await page.locator(".transcript-rows .original.compacted").count(),
          compaction.through - compaction.from + 1,
        );
      },
    );

    await t.step(
      "console: the usage screen shows a day's tokens and cost per session",
      async () => {
        await page.goto(`${url}/#/usage`);
        // The directory's row is written just after the turn: refresh until it is there.
        await refreshUntil(page, '.usage-rows tr[data-key="api:console-media"]');
        const row = page.locator('.usage-rows tr[data-key="api:console-media"]');
        const usage = await api("/v1/usage?session=api%3Aconsole-media");
        assertEquals(
          await row.locator("td").allTextContents(),
          [
            "api:console-media",
            usage.totals.total_tokens.toLocaleString("en-US"),
            usage.totals.prompt_tokens.toLocaleString("en-US"),
            usage.totals.completion_tokens.toLocaleString("en-US"),
            String(usage.totals.turns),
            costText(usage.totals.cost),
          ],
        );
        assert(usage.totals.cost > 0, JSON.stringify(usage));
        await page.locator(".usage-totals .cost").waitFor();
      },
    );

    await t.step(
      "console: a user's remembered facts are listed and forgotten with Forget",
      async () => {
        await telegramSays(4343, "remember tea");
        await until(async () => (await api("/v1/users/telegram%3A4343/memory")).facts.length === 1);
        await page.goto(`${url}/#/users`);
        await page.locator("#user-id").fill("telegram:4343");
        await page.keyboard.press("Enter");
        const fact = page.locator(".memory-facts li", { hasText: "likes green tea" });
        await fact.waitFor();
        await fact.locator("button", { hasText: "Forget" }).click();
        await page.locator(".user .hint", { hasText: "Nothing is remembered" }).waitFor();
        assertEquals((await api("/v1/users/telegram%3A4343/memory")).facts, []);
      },
    );
    await context.close();
  } finally {
    await browser?.close();
    await dev?.stop();
    await telegram.close();
    await fake.close();
    await state.cleanup();
  }
});
