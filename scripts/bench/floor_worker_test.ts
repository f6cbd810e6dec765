// Tests for the bench's floor Worker (scripts/bench/floor_worker.ts): its streamed object floor, in workerd against the fake model; Deno + Miniflare.
import { assert, assertEquals } from "@std/assert";
import { type FakeModel, startFakeModel } from "../../lib/testing/fake_model.ts";
import { postChatStream } from "./client.ts";
import { type BenchWorker, bundleWorker, startBundled } from "./worker.ts";

/** The object the `/stream-object` route uses (floor_worker.ts `STREAM_OBJECT`). */
const _STREAM_OBJECT = "floor-stream";

/** Runs `fn` against a fake model and the floor Worker (its `EMPTY` object bound) in workerd. */
async function _withFloor(fn: (fake: FakeModel, floor: BenchWorker) => Promise<void>) {
  const fake = await startFakeModel();
  let floor: BenchWorker | undefined;
  try {
    const script = await bundleWorker(
      "scripts/bench/floor_worker.ts",
      ".tmp/test-build/bench-floor/index.js",
    );
    floor = await startBundled(script, {
      vars: { LLM_BASE_URL: fake.url, LLM_API_KEY: "x" },
      durableObjects: { EMPTY: "EmptyDO" },
    });
    await fn(fake, floor);
  } finally {
    await floor?.dispose();
    await fake.close();
  }
}

/** What object `name` has stored, read through the floor's `/writes/<name>` route. */
async function _writes(floor: BenchWorker, name: string): Promise<string[]> {
  const res = await floor.fetch(`/writes/${name}`);
  return await res.json() as string[];
}

const _opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name:
    "EmptyDO.stream() stores the claim before the model is asked, relays its SSE, stores the reply",
  ..._opts,
  fn: () =>
    _withFloor(async (fake, floor) => {
      const seenByModel: string[][] = [];
      fake.script(async (req) => {
        seenByModel.push(await _writes(floor, _STREAM_OBJECT));
        return { kind: "text", text: req.lastUserText, pieces: 3 };
      });
      const url = new URL("stream-object", floor.url).href;
      const json = { "content-type": "application/json" };
      const sample = await postChatStream(url, json, "streamed through the object");
      assert(sample.ok, sample.error);
      assertEquals(fake.requests.length, 1);
      assertEquals(fake.requests[0].body.stream, true);
      assertEquals(seenByModel.length, 1);
      assertEquals(seenByModel[0].length, 1, "the claim alone is stored when the model is asked");
      assertEquals(
        JSON.parse(seenByModel[0][0]).messages[0].content,
        "streamed through the object",
      );
      const stored = await _writes(floor, _STREAM_OBJECT);
      assertEquals(stored.length, 2);
      assertEquals(stored[1], "streamed through the object");
    }),
});

Deno.test({
  name: "EmptyDO.stream() ends the stream without [DONE] when the model answers an error",
  ..._opts,
  fn: () =>
    _withFloor(async (fake, floor) => {
      fake.script(() => ({ kind: "status", status: 500 }));
      const url = new URL("stream-object", floor.url).href;
      const sample = await postChatStream(url, { "content-type": "application/json" }, "fails");
      assert(!sample.ok);
      assert(sample.error?.includes("done false"), sample.error);
      assertEquals((await _writes(floor, _STREAM_OBJECT)).length, 1, "the claim, and no reply");
    }),
});
