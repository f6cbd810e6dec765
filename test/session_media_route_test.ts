// GET /v1/sessions/{key}/media/{id} in workerd: a session's stored image for the console, behind the key, never another session's or tenant's; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, postJson } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

const OTHER = "media-route-other-key";
const baton = sharedBaton({
  media: true,
  vars: { GATEWAY_API_KEYS: `other:${OTHER}` },
  label: "MEDIA, two tenants",
});

/** A 1×1 PNG. */
const PNG_B64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

baton.test(
  "GET /v1/sessions/{key}/media/{id}: the session's image with its key; another session's id, another tenant, no key: refused",
  async (worker) => {
    for (const session of ["media-route-a", "media-route-b"]) {
      const res = await postJson(worker, "/v1/chat/completions", {
        model: "m",
        messages: [{
          role: "user",
          content: [{ type: "text", text: "look" }, {
            type: "image_url",
            image_url: { url: `data:image/png;base64,${PNG_B64}` },
          }],
        }],
      }, { "x-session-id": session });
      assertStrictEquals(res.status, 200, JSON.stringify(await res.clone().json()));
      await res.body?.cancel();
    }
    const get = (path: string, key: string | null = API_KEY) =>
      worker.fetch(path, key ? { headers: { authorization: `Bearer ${key}` } } : {});
    const state = await json(await get("/v1/sessions/api%3Amedia-route-a"));
    const [image] = state.messages[0].media;
    assertEquals({ type: image.type, size: image.size }, { type: "image/png", size: 70 });
    const path = `/v1/sessions/api%3Amedia-route-a/media/${image.id}`;

    const ok = await get(path);
    assertStrictEquals(ok.status, 200);
    assertStrictEquals(ok.headers.get("content-type"), "image/png");
    assertEquals(
      new Uint8Array(await ok.arrayBuffer()),
      Uint8Array.from(atob(PNG_B64), (c) => c.charCodeAt(0)),
    );

    // The same bytes stored by session b have b's prefix: a's id is not b's medium.
    const other = await get(`/v1/sessions/api%3Amedia-route-b/media/${image.id}`);
    assertStrictEquals(other.status, 404);
    assertStrictEquals((await json(other)).error.type, "not_found");
    const tenant = await get(path, OTHER);
    assertStrictEquals(tenant.status, 404);
    await tenant.body?.cancel();
    const anonymous = await get(path, null);
    assertStrictEquals(anonymous.status, 401);
    await anonymous.body?.cancel();
    const gone = await get(
      `/v1/sessions/api%3Amedia-route-a/media/${image.id.split("/")[0]}/${"0".repeat(40)}`,
    );
    assertStrictEquals(gone.status, 404);
    assertStrictEquals((await json(gone)).error.type, "media_expired");
  },
);

baton.done();
