// examples/my-agent end to end: built with wrangler as its own project (baton resolved as a package), run in workerd with a fake model and a fake Telegram; its bundle without pdf.js, a PDF refused in words; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, json, WEBHOOK_SECRET } from "./_support/clients.ts";
import {
  telegramBotToken,
  telegramDriver as driver,
  telegramMediaUpdate,
} from "./_support/drivers/telegram.ts";
import { startFakePlatform } from "./_support/fake_platform.ts";
import { apiRoots, expectOk } from "./_support/platform_rig.ts";
import { startMiniflare, wranglerBundle } from "./_support/worker.ts";
import { type FakeModel, type FakeModelRequest, startFakeModel } from "../lib/testing/mod.ts";
import { INVOICE_PDF, pdfChat } from "./_support/pdf_chat.ts";

const _root = new URL("../", import.meta.url);
const _app = new URL("examples/my-agent/", _root);
const _out = new URL(".tmp/test-build/example-my-agent/", _root);

let _built: Promise<string> | undefined;

/** The example bundled once per run (`_buildExample`): the tests share it. */
function buildExample(): Promise<string> {
  return _built ??= _buildExample();
}

/**
 * Makes `node_modules/baton` of the example resolve as `npm install` makes it (`"baton":
 * "file:../.."`: a symlink to the repo root), then bundles the example with this repo's wrangler,
 * its cwd the example's folder (its wrangler.toml, its src/index.ts). Returns the bundle's path.
 */
async function _buildExample(): Promise<string> {
  const modules = new URL("node_modules/", _app);
  await Deno.mkdir(modules, { recursive: true });
  const link = new URL("baton", modules).pathname;
  try {
    await Deno.lstat(link);
  } catch {
    await Deno.symlink("../../..", link, { type: "dir" });
  }
  return await wranglerBundle(_app.pathname, _out.pathname);
}

/**
 * The example, built, running in workerd against a fake model and a fake Telegram, with the
 * bindings its wrangler.toml names (no directory; R2 `MEDIA` when `media`).
 */
async function startExample(options: { media?: boolean } = {}) {
  const scriptPath = await buildExample();
  const fake = await startFakeModel();
  const telegram = await startFakePlatform();
  const { mf, url } = await startMiniflare(scriptPath, {
    vars: {
      LLM_BASE_URL: fake.url,
      LLM_API_KEY: "sk-test",
      GATEWAY_API_KEY: API_KEY,
      WEBHOOK_SECRET,
      ACCESS_POLICY: "open",
      ...apiRoots(telegram),
      ...driver.vars(),
    },
    durableObjects: {
      SESSIONS: "SessionDO",
      ACCESS: "AccessDO",
      CONVERSATIONS: "ConversationPointerDO",
      IDEMPOTENCY_KEYS: "IdempotencyKeyDO",
    },
    directory: "none",
    ...(options.media ? { media: true } : {}),
  });
  const worker = { fetch: (path: string, init?: RequestInit) => fetch(new URL(path, url), init) };
  return { fake, telegram, mf, worker };
}

/** The model's script for a roll: call roll_dice with `sides`, then answer with the tool's result. */
function rollThenSay(sides: number) {
  return (req: FakeModelRequest) => {
    const result = req.body.messages.findLast((m: { role: string }) => m.role === "tool");
    if (!result) return { kind: "tool_call" as const, name: "roll_dice", args: { sides } };
    return { kind: "text" as const, text: `rolled ${JSON.parse(result.content).roll}` };
  };
}

/** The system prompt of the model's `index`th request, and the tool result it was sent after it. */
function seen(fake: FakeModel, index: number): { system: string; roll: number | null } {
  const messages = fake.requests[index].body.messages as { role: string; content: string }[];
  const tool = messages.findLast((m) => m.role === "tool");
  return {
    system: messages.filter((m) => m.role === "system").map((m) => m.content).join("\n"),
    roll: tool ? JSON.parse(tool.content).roll : null,
  };
}

Deno.test({
  name:
    "examples/my-agent answers an API call and a Telegram update with its own roll_dice tool and its own prompt",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { fake, telegram, mf, worker } = await startExample();
    try {
      // (a) An API turn: the model calls roll_dice, gets its result, and answers with it.
      fake.script(rollThenSay(20));
      // deno-lint-ignore no-explicit-any
      const reply = await chatReply(await chat(worker as any, "roll a d20", { user: "u-api" }));
      assertStrictEquals(fake.requests.length, 2);
      const api = seen(fake, 1);
      assert(api.roll !== null && Number.isInteger(api.roll) && api.roll >= 1 && api.roll <= 20);
      assertStrictEquals(reply, `rolled ${api.roll}`);
      assert(seen(fake, 0).system.includes("You are Dice Goblin"), seen(fake, 0).system);
      assert(seen(fake, 0).system.includes(" on api."), seen(fake, 0).system);

      // (b) A Telegram update: the same tool, the prompt written for this user on telegram.
      fake.reset();
      fake.script(rollThenSay(6));
      const chatId = driver.newChat();
      const update = await driver.message({ chat: chatId, text: "roll a die for me" });
      await expectOk(
        await worker.fetch(driver.path, {
          method: "POST",
          headers: update.headers,
          body: update.body,
        }),
      );
      await telegram.waitForCalls(1);
      const tg = seen(fake, 1);
      assert(tg.roll !== null && Number.isInteger(tg.roll) && tg.roll >= 1 && tg.roll <= 6);
      assertEquals(telegram.calls[0].body.chat_id, Number(chatId));
      assertStrictEquals(telegram.calls[0].body.text, `rolled ${tg.roll}`);
      assert(
        seen(fake, 0).system.includes(
          `You are Dice Goblin, the game-night helper of alice${chatId} on telegram.`,
        ),
        seen(fake, 0).system,
      );

      // (c) The deployment's own tool names are baton's: a client's tool may not take one.
      const clash = await worker.fetch("/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "any",
          messages: [{ role: "user", content: "hi" }],
          tools: [{ type: "function", function: { name: "roll_dice", parameters: {} } }],
        }),
      });
      assertStrictEquals(clash.status, 400);
      assert((await json(clash)).error.message.includes("roll_dice is one of baton's own tools"));
    } finally {
      fake.release();
      await mf.dispose();
      await fake.close();
      await telegram.close();
    }
  },
});

Deno.test("examples/my-agent's bundle holds no pdf.js: defineBaton imports it only when a deployment passes `pdf`", async () => {
  const index = await Deno.readTextFile(await buildExample());
  // pdf.js's build starts by polyfilling DOMMatrix; its loader imports ./pdfjs.mjs.
  assert(!index.includes("polyfillDOMMatrix"), "index.js holds pdf.js");
  assert(!index.includes("pdfjs.mjs"), "index.js imports pdf.js");
  const uploaded = [...Deno.readDirSync(_out)].map((e) => e.name).filter((n) => /\.m?js$/.test(n));
  assertEquals(uploaded, ["index.js"]);
});

Deno.test({
  name:
    "examples/my-agent (no pdf) refuses a PDF in words: a 400 naming the API's part, a notice to the Telegram user, a note the model reads",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { fake, telegram, mf, worker } = await startExample({ media: true });
    try {
      // (a) The API: a PDF file part is refused before any turn, the part and the reason named.
      const refused = await worker.fetch("/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(pdfChat()),
      });
      assertStrictEquals(refused.status, 400);
      assertStrictEquals(
        (await json(refused)).error.message,
        "messages[0].content[1]: PDFs are not read on this deployment",
      );
      assertStrictEquals(fake.requests.length, 0, "no turn started");

      // (b) Telegram: the user is told, and the model's turn says which file was not read and why.
      fake.script(() => ({ kind: "text", text: "noted" }));
      telegram.serveTelegramFile(telegramBotToken, "doc-pdf", { bytes: INVOICE_PDF });
      const update = telegramMediaUpdate({
        chat: driver.newChat(),
        id: "9001",
        text: "what is due?",
      }, {
        document: {
          file_id: "doc-pdf",
          file_unique_id: "doc-pdf-u",
          file_name: "invoice.pdf",
          mime_type: "application/pdf",
          file_size: INVOICE_PDF.length,
        },
      });
      const body = JSON.stringify(update);
      await expectOk(
        await worker.fetch(driver.path, {
          method: "POST",
          headers: await driver.sign(body, driver.credentials),
          body,
        }),
      );
      // One reply: the notice, then the model's answer.
      await telegram.waitForCalls(1);
      assertStrictEquals(
        telegram.calls[0].body.text,
        "I couldn't read the document invoice.pdf (PDFs are not read on this deployment).\n\nnoted",
      );
      const sent = JSON.stringify(fake.requests[0].body.messages);
      assert(sent.includes("PDFs are not read on this deployment"), sent);
      assert(!sent.includes("Invoice 4711"), "the PDF's text was read");
    } finally {
      fake.release();
      await mf.dispose();
      await fake.close();
      await telegram.close();
    }
  },
});
