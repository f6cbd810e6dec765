// The web console in real Chromium (playwright-core) against `wrangler dev` with a fake model and a fake Telegram API; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { freePort, startWranglerDev, type WranglerDev } from "../scripts/_wrangler_dev.ts";
import type { Json } from "./_support/clients.ts";
import {
  type FakeModel,
  type FakeModelRequest,
  type FakeModelStep,
  startFakeModel,
} from "../lib/testing/fake_model.ts";
import { type FakePlatform, startFakePlatform } from "./_support/fake_platform.ts";
import { tempPersistDir } from "./_support/worker.ts";

/** Debian's chromium (`.ci/run` installs it when missing). */
const CHROMIUM = "/usr/bin/chromium";
const KEY = "console-test-key";
const TG_SECRET = "tg-console-secret";
const TG_TOKEN = "123456789:AAH-console_test_token";
const _docs = new URL("../docs/", import.meta.url);

function _hasChromium(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

/**
 * The fake model's script, by the user's text: replies caught mid-stream (a piece, then held until
 * `release()`), a turn held whole, and a tool call that asks for approval (`APPROVAL_TOOLS`).
 */
function script(req: FakeModelRequest): FakeModelStep {
  const last = req.body.messages.at(-1);
  // After the tool ran: a piece of the answer, then the rest once released.
  if (last?.role === "tool") return { kind: "text", text: `done: ${last.content}`, holdAfter: 1 };
  switch (req.lastUserText) {
    case "stream please":
      return { kind: "text", text: "alpha beta gamma", holdAfter: 1 };
    case "slow stop":
      return { kind: "text", text: "one two three", holdAfter: 1 };
    case "reload me":
      return { kind: "text", text: "before after", holdAfter: 1 };
    case "blocker":
      return { kind: "hold" };
    case "ask me":
      return { kind: "tool_call", name: "session_info", args: {} };
    default:
      return { kind: "text", text: `echo: ${req.lastUserText}` };
  }
}

/** Everything one run of the console tests shares: baton under wrangler dev, the fakes, Chromium. */
interface _Rig {
  url: string;
  fake: FakeModel;
  telegram: FakePlatform;
  browser: Browser;
  /** An API call with the console's key. */
  api(path: string, init?: RequestInit): Promise<Json>;
}

/** A new browser tab of its own (its own sessionStorage), 1000×800 unless given. */
async function tab(rig: _Rig, width = 1000, height = 800): Promise<[BrowserContext, Page]> {
  const context = await rig.browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  await page.goto(rig.url);
  return [context, page];
}

/** Logs in with `key` by keyboard only: type the key, Enter. */
async function login(page: Page, key = KEY): Promise<void> {
  await page.locator("#api-key").focus();
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
}

/** Presses Tab until the focused element's text is `text` (keyboard-only navigation). */
async function tabTo(page: Page, text: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press("Tab");
    // Evaluated in the page (a string: this file is type-checked without the DOM's types).
    const focused = await page.evaluate<string>(
      `document.activeElement?.textContent?.trim() ?? ""`,
    );
    if (focused === text) return;
  }
  throw new Error(`Tab never reached "${text}"`);
}

/** Types `text` into the focused message box and sends it with Enter. */
async function send(page: Page, text: string): Promise<void> {
  await page.locator("#message").focus();
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

const live = (page: Page) => page.locator(".bubble.live");

/** Waits until the live reply's phase is `phase`. */
async function untilPhase(page: Page, phase: string): Promise<void> {
  await page.locator(`.bubble.live[data-phase="${phase}"]`).waitFor();
}

/** Waits until the transcript shows an assistant message with exactly `text`. */
async function untilReply(page: Page, text: string): Promise<void> {
  await page.locator(".transcript .bubble.assistant:not(.live) .text", { hasText: text }).first()
    .waitFor();
}

/** The page is no wider than its viewport: nothing scrolls sideways. */
async function assertNoOverflow(page: Page, where: string): Promise<void> {
  const [scroll, width] = await page.evaluate<number[]>(
    `[document.documentElement.scrollWidth, window.innerWidth]`,
  );
  assert(scroll <= width, `${where}: ${scroll} px wide in a ${width} px viewport`);
}

function _requestsFor(fake: FakeModel, text: string): number {
  return fake.requests.filter((r) =>
    r.lastUserText === text && r.body.messages.at(-1)?.role === "user"
  )
    .length;
}

Deno.test({
  name:
    "console: in Chromium against wrangler dev — login, streaming, stop, reload, approval, inspector, 375 px, keyboard",
  ignore: !_hasChromium(),
  // wrangler dev, the fakes and Chromium are stopped in `finally`; their handles outlive steps.
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
        APPROVAL_TOOLS: "session_info",
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
    const rig: _Rig = {
      url,
      fake,
      telegram,
      browser,
      api: async (path, init = {}) => {
        const res = await fetch(`${url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        });
        const body = await res.json();
        if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
        return body;
      },
    };
    await Deno.mkdir(_docs, { recursive: true });

    await t.step("console: a wrong key shows an error and keeps the login", async () => {
      const [context, page] = await tab(rig);
      await login(page, "not-the-key");
      const alert = page.locator(".login [role=alert]");
      await alert.waitFor();
      assertEquals(await alert.textContent(), "That API key was not accepted.");
      assertEquals(await page.evaluate(`sessionStorage.getItem("baton.key")`), null);
      await context.close();
    });

    // One tab for the chat steps: they continue one conversation.
    const [chatContext, page] = await tab(rig);
    let sessionKey = "";

    await t.step(
      "console: keyboard only — log in, New conversation, Enter sends, the reply streams in pieces",
      async () => {
        await login(page);
        await page.locator(".sessions").waitFor();
        await tabTo(page, "New conversation");
        await page.keyboard.press("Enter");
        await page.locator("#message").waitFor();
        await send(page, "stream please");
        // The first piece is shown while the model holds the rest: the reply arrives in pieces.
        await page.locator(".bubble.live .reply", { hasText: /^alpha $/ }).waitFor();
        assertEquals(await live(page).getAttribute("data-phase"), "running");
        fake.release();
        await untilReply(page, "alpha beta gamma");
        sessionKey = decodeURIComponent(new URL(page.url()).hash.replace("#/chat/", ""));
        assert(sessionKey.startsWith("api:console-"), sessionKey);
        // The API key never reaches a URL.
        assert(!page.url().includes(KEY));
      },
    );

    await t.step("console: Escape stops a slow run mid-way", async () => {
      await send(page, "slow stop");
      await page.locator(".bubble.live .reply", { hasText: /^one t$/ }).waitFor();
      await page.keyboard.press("Escape");
      await untilPhase(page, "cancelled");
      const runId = await live(page).getAttribute("data-run-id");
      assertEquals((await rig.api(`/v1/runs/${runId}`)).status, "cancelled");
      assertEquals(await page.locator(".bubble.live .reply").textContent(), "one t");
    });

    await t.step(
      "console: Stop before the turn starts — queued behind another run, and before the run is known",
      async () => {
        const session = sessionKey.slice("api:".length);
        const blocker = await rig.api("/v1/runs", {
          method: "POST",
          body: JSON.stringify({ input: "blocker", session }),
        });
        await until(() => Promise.resolve(_requestsFor(fake, "blocker") === 1)); // it runs, held
        await send(page, "queued one");
        await untilPhase(page, "queued");
        await page.locator("button.stop").click();
        await untilPhase(page, "cancelled");
        const queuedRun = await live(page).getAttribute("data-run-id");
        assertEquals((await rig.api(`/v1/runs/${queuedRun}`)).status, "cancelled");

        // Stop while the request that starts the run is still on its way (no run id yet).
        let letGo = () => {};
        const held = new Promise<void>((resolve) => letGo = resolve);
        await page.route("**/v1/runs", async (route) => {
          await held;
          await route.continue();
        });
        await send(page, "stopped early");
        await untilPhase(page, "sending");
        await page.keyboard.press("Escape");
        await page.locator(".bubble.live .phase", { hasText: "stopping…" }).waitFor();
        letGo();
        await untilPhase(page, "cancelled");
        await page.unroute("**/v1/runs");

        fake.release(); // the blocker ends
        await until(async () =>
          (await rig.api(`/v1/runs/${blocker.run_id}`)).status === "completed"
        );
        assertStrictEquals(_requestsFor(fake, "queued one"), 0);
        assertStrictEquals(_requestsFor(fake, "stopped early"), 0);
      },
    );

    await t.step(
      "console: a reload mid-run reattaches to the same run and never starts a second",
      async () => {
        await send(page, "reload me");
        await page.locator(".bubble.live .reply", { hasText: /^befo$/ }).waitFor();
        const before = await live(page).getAttribute("data-run-id");
        await page.reload();
        // Replayed from the start (late join): the piece already sent shows again, same run.
        await page.locator(".bubble.live .reply", { hasText: /^befo$/ }).waitFor();
        assertEquals(await live(page).getAttribute("data-run-id"), before);
        fake.release();
        await untilReply(page, "before after");
        assertStrictEquals(_requestsFor(fake, "reload me"), 1);
        const inbox =
          (await rig.api(`/v1/sessions/${encodeURIComponent(sessionKey)}/inspect`)).inbox;
        assertStrictEquals(inbox.filter((m: Json) => m.text === "reload me").length, 1);
      },
    );

    await t.step(
      "console: an approval question is answered with its buttons; the tool call shows",
      async () => {
        await send(page, "ask me");
        await page.locator(".approval button[data-choice=once]").waitFor();
        await untilPhase(page, "waiting_for_approval");
        await page.screenshot({ path: new URL("console-chat.png", _docs).pathname });
        // Keyboard: Tab to the button, Enter answers.
        await tabTo(page, "Allow once");
        await page.keyboard.press("Enter");
        // The tool call shows as finished while the answer streams.
        await page.locator(".bubble.live .tool.done[data-tool=session_info]").waitFor();
        await page.locator(".bubble.live .reply", { hasText: /^done: / }).waitFor();
        fake.release();
        await untilReply(page, '"platform":"api"');
        await page.locator(".tool-result").first().waitFor();
        assertStrictEquals(
          fake.requests.filter((r) => r.body.messages.at(-1)?.role === "tool").length,
          1,
        );
      },
    );

    await t.step(
      "console: Escape stops a run waiting for approval; the tool never runs",
      async () => {
        const toolResults = () =>
          fake.requests.filter((r) => r.body.messages.at(-1)?.role === "tool").length;
        const before = toolResults();
        await send(page, "ask me");
        await untilPhase(page, "waiting_for_approval");
        await page.keyboard.press("Escape");
        await untilPhase(page, "cancelled");
        assertStrictEquals(await page.locator(".approval").count(), 0);
        assertStrictEquals(toolResults(), before);
      },
    );

    await t.step(
      "console: the inspector of a Telegram session shows its sent reply parts (admin key)",
      async () => {
        const res = await fetch(`${url}/webhooks/telegram`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "X-Telegram-Bot-Api-Secret-Token": TG_SECRET,
          },
          body: JSON.stringify({
            update_id: 700_001,
            message: {
              message_id: 1,
              date: Math.floor(Date.now() / 1000),
              chat: { id: 4242, type: "private", first_name: "Ann" },
              from: { id: 4242, is_bot: false, first_name: "Ann" },
              text: "hello from telegram",
            },
          }),
        });
        assertStrictEquals(res.status, 200);
        await res.body?.cancel();
        await telegram.waitForCalls(1);
        await page.goto(`${url}/#/`);
        // This conversation is listed: from the directory, or (before it exists: a 404) from
        // the sessions this tab opened.
        await page.locator(".session-row .key", { hasText: sessionKey }).waitFor();
        await page.locator("#session-search").fill("telegram:4242");
        await page.keyboard.press("Enter");
        await page.locator(".chat .key", { hasText: "telegram:4242" }).waitFor();
        await page.locator("a", { hasText: "Inspector" }).click();
        const sent = page.locator(".part-rows li[data-status=sent]", {
          hasText: "echo: hello from telegram",
        });
        // The part is marked sent just after Telegram answered: refresh until it shows.
        await until(async () => {
          if (await sent.count()) return true;
          await page.locator("button", { hasText: "Refresh" }).click();
          return false;
        });
        await page.locator(".inbox-rows li", { hasText: "hello from telegram" }).waitFor();
        assert((await page.locator(".context").textContent())?.includes('"platform": "telegram"'));
        await page.screenshot({
          path: new URL("console-inspector.png", _docs).pathname,
          fullPage: true,
        });
      },
    );
    await chatContext.close();

    await t.step(
      "console: the session list renders the directory's rows, newest first, searchable",
      async () => {
        const [context, page] = await tab(rig);
        const now = Date.now();
        // The directory's contract (GET /v1/sessions, paginated by cursor), answered here.
        const pages: Record<string, unknown> = {
          "": {
            data: [
              row("api:old", "Old one", now - 3_600_000, "idle", 0),
              row("telegram:9", "Asking", now - 1_000, "waiting_for_approval", 0),
              row("api:busy", "Busy", now - 60_000, "running", 2),
            ],
            next_cursor: "page-2",
          },
          "page-2": {
            data: [row("slack:T1/C2", "Older", now - 86_400_000, "idle", 0)],
            next_cursor: null,
          },
        };
        await page.route((u) => u.pathname === "/v1/sessions", (route) => {
          const cursor = new URL(route.request().url()).searchParams.get("cursor") ?? "";
          return route.fulfill({
            contentType: "application/json",
            body: JSON.stringify(pages[cursor]),
          });
        });
        await login(page);
        await page.locator(".session-row").first().waitFor();
        assertEquals(await page.locator(".session-row .key").allTextContents(), [
          "telegram:9",
          "api:busy",
          "api:old",
        ]);
        assertEquals(await page.locator(".session-row .status").allTextContents(), [
          "waiting for approval",
          "running · queued 2",
          "idle",
        ]);
        await page.locator("button", { hasText: "More sessions" }).click();
        await page.locator(".session-row .key", { hasText: "slack:T1/C2" }).waitFor();
        assertStrictEquals(await page.locator("button", { hasText: "More sessions" }).count(), 0);
        await page.locator("#session-search").fill("busy");
        assertEquals(await page.locator(".session-row .key").allTextContents(), ["api:busy"]);
        await context.close();
      },
    );

    await t.step(
      "console: nothing scrolls sideways at 375 px (sessions, chat, inspector)",
      async () => {
        const [context, page] = await tab(rig, 375, 740);
        await login(page);
        await page.locator(".sessions").waitFor();
        await assertNoOverflow(page, "sessions");
        await page.goto(`${url}/#/chat/${encodeURIComponent(sessionKey)}`);
        await untilReply(page, "alpha beta gamma");
        await assertNoOverflow(page, "chat");
        await page.goto(`${url}/#/inspect/telegram%3A4242`);
        await page.locator(".part-rows li").first().waitFor();
        await assertNoOverflow(page, "inspector");
        // An API session's inspector: its runs' timelines, with event times and durations.
        await page.goto(`${url}/#/inspect/${encodeURIComponent(sessionKey)}`);
        await page.locator(".timeline li", { hasText: "tool.completed" }).first().waitFor();
        const ends = page.locator(".timeline li", { hasText: "run.completed" });
        assert((await ends.first().textContent())?.includes("took"));
        assert(await page.locator(".inbox-rows .status-cancelled").count() >= 3);
        await assertNoOverflow(page, "API session inspector");
        await context.close();
      },
    );
  } finally {
    fake.release();
    await browser?.close();
    await dev?.stop();
    await telegram.close();
    await fake.close();
    await state.cleanup();
  }
});

/** A row of `GET /v1/sessions` as the directory answers it. */
function row(key: string, title: string, at: number, status: string, queued: number) {
  const iso = new Date(at).toISOString();
  return {
    key,
    platform: key.split(":")[0],
    title,
    created_at: iso,
    last_activity_at: iso,
    status,
    queued,
  };
}

/** Polls `check` until true (20 s at most): the UI and the server settle at their own pace. */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}
