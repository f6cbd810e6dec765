// Files out end to end: a tool's files stored in MEDIA, sent to Telegram as native media (sendPhoto / sendDocument, multipart) through the outbox exactly once, a kill between the photo and the text; the signed /media link; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { json, settled, testVars, until } from "./_support/clients.ts";
import { telegramDriver as driver } from "./_support/drivers/telegram.ts";
import {
  type FakePlatform,
  type PlatformCall,
  startFakePlatform,
  type UploadedFile,
} from "./_support/fake_platform.ts";
import { CHART_PNG_BASE64, REPORT_TEXT } from "./_support/files_fixtures.ts";
import { expectOk } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { startWorker, tempPersistDir, type TestWorker } from "./_support/worker.ts";
import { startFakeModel } from "../lib/testing/fake_model.ts";
import type { FakeModel, FakeModelRequest } from "../lib/testing/fake_model.ts";
import { FILES_ATTACHED_NOTE } from "../lib/agent/mod.ts";
import { mediaFileUrl } from "../lib/media/mod.ts";

const ENTRY = "test/_support/files_worker.ts";
const LINK_SECRET = "media-link-secret-for-tests";
const PUBLIC_URL = "https://baton.example.com";
const vars = { ...driver.vars(), MEDIA_URL_SECRET: LINK_SECRET, PUBLIC_URL };
const baton = sharedBaton({ entry: ENTRY, media: true, vars });

const PNG = Uint8Array.from(atob(CHART_PNG_BASE64), (c) => c.charCodeAt(0));

let _chats = 0;
/** A private chat of this file's own. */
const newChat = () => String(8_600_000 + ++_chats);

/** POSTs a text message to the bot as Telegram does; asserts the acknowledgement. */
async function say(worker: TestWorker, chat: string, text: string, id: string): Promise<void> {
  const body = JSON.stringify(driver.shape({ chat, text, id }));
  const headers = await driver.sign(body, driver.credentials);
  await expectOk(await worker.fetch(driver.path, { method: "POST", headers, body }));
}

/** The model calls `tool` once, then answers `text` (having seen the tool's result). */
function callsThenSays(fake: FakeModel, tool: string, text: string): void {
  fake.script((req) => {
    const result = _toolResult(req);
    return result === null ? { kind: "tool_call", name: tool, args: {} } : { kind: "text", text };
  });
}

// deno-lint-ignore no-explicit-any
function _toolResult(req: FakeModelRequest): any {
  // deno-lint-ignore no-explicit-any
  const tool = req.body.messages.findLast((m: any) => m.role === "tool");
  return tool ? tool : null;
}

/** The reply calls to `chat` (texts and uploads), in order. */
function sendsTo(platform: FakePlatform, chat: string): PlatformCall[] {
  return platform.calls.filter((c) =>
    /\/(sendMessage|sendPhoto|sendDocument)$/.test(c.path) && String(c.body?.chat_id) === chat
  );
}

baton.test(
  "draw_chart's image goes to Telegram as one sendPhoto with its exact bytes, then the text reply; the model saw a note, never the bytes",
  async (worker, fake, telegram) => {
    const chat = newChat();
    callsThenSays(fake, "draw_chart", "Here is your chart.");
    await say(worker, chat, "draw me a chart", "11");
    await until(() => sendsTo(telegram, chat).length >= 2, "the photo and the text");
    await settled(worker, `telegram:${chat}`);
    const sends = sendsTo(telegram, chat);
    assertEquals(sends.map((c) => c.path.split("/").pop()), ["sendPhoto", "sendMessage"]);
    const photo = sends[0].body.photo as UploadedFile;
    assertEquals(photo.bytes, PNG);
    assertStrictEquals(photo.filename, "chart.png");
    assertStrictEquals(photo.type, "image/png");
    assertEquals(JSON.parse(sends[0].body.reply_parameters).message_id, 11);
    assertStrictEquals(sends[1].body.text, "Here is your chart.");
    // The model was told the file was attached; neither the bytes nor baton's `files` reached it.
    const seen = fake.requests.at(-1)!.body.messages;
    const result = JSON.parse(_toolResult(fake.requests.at(-1)!).content);
    assertStrictEquals(result.summary, "one chart drawn");
    assertStrictEquals(result.note, FILES_ATTACHED_NOTE);
    assertEquals(result.files_attached, [`chart.png (image/png, ${PNG.length} bytes)`]);
    const wire = JSON.stringify(seen);
    assert(!wire.includes(CHART_PNG_BASE64), "the bytes reached the model");
    // deno-lint-ignore no-explicit-any
    assert(!seen.some((m: any) => "files" in m), "baton's files field reached the model");
  },
);

baton.test(
  "write_report's text file goes to Telegram as a sendDocument upload named report.txt",
  async (worker, fake, telegram) => {
    const chat = newChat();
    callsThenSays(fake, "write_report", "The report is attached.");
    await say(worker, chat, "write the report", "12");
    await until(() => sendsTo(telegram, chat).length >= 2, "the document and the text");
    const [doc, text] = sendsTo(telegram, chat);
    assert(doc.path.endsWith("/sendDocument"), doc.path);
    const file = doc.body.document as UploadedFile;
    assertStrictEquals(new TextDecoder().decode(file.bytes), REPORT_TEXT);
    assertStrictEquals(file.filename, "report.txt");
    assertStrictEquals(text.body.text, "The report is attached.");
  },
);

/** The id and signed link of the chart as stored for `chat` (its key is named by its session and bytes). */
async function chartLink(worker: TestWorker, fake: FakeModel, chat: string): Promise<URL> {
  callsThenSays(fake, "draw_chart", "chart sent");
  await say(worker, chat, "chart please", "13");
  await settled(worker, `telegram:${chat}`);
  const { mediaKey } = await import("../lib/media/mod.ts");
  const id = await mediaKey(`telegram:${chat}`, PNG);
  return new URL(await mediaFileUrl(PUBLIC_URL, LINK_SECRET, id, Date.now() / 1000));
}

baton.test(
  "GET /media/{id}: a signed link serves the stored bytes typed by content; a tampered, foreign or expired one is 403",
  async (worker, fake) => {
    const link = await chartLink(worker, fake, newChat());
    const path = link.pathname + link.search;
    const ok = await worker.fetch(path);
    assertStrictEquals(ok.status, 200);
    assertStrictEquals(ok.headers.get("content-type"), "image/png");
    assertEquals(new Uint8Array(await ok.arrayBuffer()), PNG);

    const sig = link.searchParams.get("sig")!;
    const flipped = (sig[0] === "a" ? "b" : "a") + sig.slice(1);
    const exp = Number(link.searchParams.get("exp"));
    const id = link.pathname.slice("/media/".length);
    const refusals = [
      `/media/${id}?exp=${exp}&sig=${flipped}`, // tampered signature
      `/media/${id}?exp=${exp + 60}&sig=${sig}`, // a later expiry under the old signature
      `/media/${id}?exp=${exp}`, // no signature
      new URL(await mediaFileUrl(PUBLIC_URL, "another-secret-entirely", id, Date.now() / 1000))
        .pathname + `?exp=${exp}&sig=${"0".repeat(64)}`,
    ];
    const expired = new URL(await mediaFileUrl(PUBLIC_URL, LINK_SECRET, id, 1_000, 60));
    refusals.push(expired.pathname + expired.search);
    for (const bad of refusals) {
      const res = await worker.fetch(bad);
      assertStrictEquals(res.status, 403, bad);
      const body = await json(res);
      assert(["invalid_signature", "link_expired"].includes(body.error.type), bad);
    }
  },
);

baton.done();

Deno.test({
  name:
    "OutboxSender after a kill between the photo and the text: the photo is sent once, the text after the restart",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const platform = await startFakePlatform();
    const fake = await startFakeModel();
    const dir = await tempPersistDir();
    const textHeld = Promise.withResolvers<void>();
    let textSeen = false;
    platform.respond(async (call, i) => {
      // The first text send never answers: the runtime dies while it is out, the photo recorded.
      if (call.path.endsWith("/sendMessage") && !textSeen) {
        textSeen = true;
        await textHeld.promise;
        return { status: 500 };
      }
      return { status: 200, body: { ok: true, result: { message_id: 100 + i } } };
    });
    callsThenSays(fake, "draw_chart", "chart after restart");
    const all = {
      ...testVars(fake),
      TELEGRAM_API_ROOT: platform.url,
      TURN_LEASE_MS: "300",
      ...vars,
    };
    const chat = newChat();
    try {
      const first = await startWorker({
        vars: all,
        persistDir: dir.path,
        entry: ENTRY,
        media: true,
      });
      try {
        await say(first, chat, "chart, then die", "21");
        // Generous: two workerd starts and a turn, on a loaded machine.
        await until(() => textSeen, "the text send", 30_000);
      } finally {
        await first.dispose();
      }
      const second = await startWorker({
        vars: all,
        persistDir: dir.path,
        entry: ENTRY,
        media: true,
      });
      try {
        await until(
          () => sendsTo(platform, chat).filter((c) => c.path.endsWith("/sendMessage")).length >= 2,
          "the text resent after the restart",
          45_000,
        );
        await settled(second, `telegram:${chat}`);
      } finally {
        await second.dispose();
      }
      const sends = sendsTo(platform, chat).map((c) => c.path.split("/").pop());
      assertEquals(sends.filter((s) => s === "sendPhoto").length, 1, sends.join());
      assertStrictEquals(sends[0], "sendPhoto");
    } finally {
      textHeld.resolve();
      await fake.close();
      await platform.close();
      await dir.cleanup();
    }
  },
});
