// Tests of the images a session's turns send the model: each stored image read from MEDIA once per session object, not once per turn (createTurnExecutor with an image cache); runs under Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { bindTurn } from "../runtime/mod.ts";
import { encodeBase64 } from "../runtime/mod.ts";
import { type MediaRef, type MediaStore, memoryMediaStore } from "../media/mod.ts";
import { startFakeModel } from "../testing/fake_model.ts";
import type { TurnProgress } from "../session/mod.ts";
import { createTurnExecutor } from "./agent.ts";
import { readConfig } from "./config.ts";

const GIF = Uint8Array.from(
  atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
  (c) => c.charCodeAt(0),
);

/** A memory store that counts its gets (bytes read) and its `has` checks (no bytes read). */
function countingStore(): MediaStore & {
  gets: number;
  heads: number;
  objects: Map<string, unknown>;
} {
  const inner = memoryMediaStore();
  const store = {
    gets: 0,
    heads: 0,
    has(key: string) {
      store.heads++;
      return inner.has!(key);
    },
    objects: inner.objects,
    put: inner.put.bind(inner),
    delete: inner.delete.bind(inner),
    list: inner.list!.bind(inner),
    get(key: string) {
      store.gets++;
      return inner.get(key);
    },
  };
  return store;
}

Deno.test("createTurnExecutor() reads each image in context from MEDIA once, not again on every turn", async () => {
  const model = await startFakeModel();
  try {
    const store = countingStore();
    const refs = [0, 1, 2].map((i): MediaRef => {
      store.objects.set(`k/${i}`, { bytes: GIF, type: "image/gif" });
      return { id: `k/${i}`, type: "image/gif", size: GIF.length };
    });
    const config = readConfig({ LLM_BASE_URL: model.url, LLM_API_KEY: "k", LLM_MODEL: "m" });
    const execute = createTurnExecutor(config, [], undefined, undefined, {}, store);
    const history = [
      { role: "user", content: "photos", media: refs },
      { role: "assistant", content: "seen" },
    ] as ChatMessage[];
    const context = { session_key: "tg:images", user_id: "u", message_id: "m" };
    const turn = (text: string) =>
      bindTurn(context, {}, () => {
        const progress: TurnProgress = { step: 0, messages: [] };
        return execute({ text, context }, history, new AbortController().signal, progress);
      });
    for (const text of ["one", "two", "three"]) await turn(text);
    // Every model call still carried the three images.
    const url = `data:image/gif;base64,${encodeBase64(GIF)}`;
    for (const request of model.requests) {
      const parts = request.body.messages.flatMap((m: { content: unknown }) =>
        Array.isArray(m.content) ? m.content : []
      );
      assertEquals(
        parts.filter((p: { type: string }) => p.type === "image_url").map((
          p: { image_url: { url: string } },
        ) => p.image_url.url),
        [url, url, url],
      );
    }
    assertStrictEquals(model.requests.length, 3);
    assertStrictEquals(store.gets, 3, "one read per image for the object's life, not per turn");
    // Later turns only check each image is still stored (R2's head: no bytes, no encoding).
    assertStrictEquals(store.heads, 6);
  } finally {
    await model.close();
  }
});
