// The chaos run's media share: some Telegram messages are photos, served by the fake Telegram's getFile and file server with seeded slow and failing downloads while kills land; the model must see each photo's own bytes, or its user get the one "couldn't read" notice; Deno.
import { decodeBase64 } from "../../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../../lib/testing/fake_model.ts";
import type { FakeAnswer, FakeCall } from "./fake_server.ts";
import type { ChaosMedia, ChaosObservation } from "./observation.ts";
import {
  CHAOS_MARKER,
  type ChaosMessage,
  type ChaosPhoto,
  type ChaosSession,
  type PhotoFate,
} from "./plan.ts";
import type { ChaosFigure } from "./report.ts";
import { fig, type Tally } from "./tally.ts";

/** Row labels of the media checks (Telegram's column). */
export const MEDIA_LABELS = {
  photos: "photo messages (the fake's file server: served / slow / failing)",
  unseen: "photos answered without the model seeing them or a notice saying so",
  wrong: "model calls carrying another message's image",
} as const;

/** The 1×1 PNG every photo starts with; its message's marker follows IEND, so each is its own. */
const _PNG = decodeBase64(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
)!;

/** The bytes of the photo `marker`'s message carries. */
export function photoBytes(marker: string): Uint8Array {
  const tail = new TextEncoder().encode(`chaos-photo:${marker}`);
  const bytes = new Uint8Array(_PNG.length + tail.length);
  bytes.set(_PNG);
  bytes.set(tail, _PNG.length);
  return bytes;
}

/**
 * A share `rate` of the Telegram messages (one-line echoes that ask no approval) carry a photo:
 * 60 % served at once, 25 % slowly (0.3–1.2 s, within the turn's timeout), 15 % failing (500
 * every time). From a stream of its own, so a seed's other draws stay as they were.
 */
export function planMedia(
  sessions: ChaosSession[],
  rate: number,
  random: () => number,
): ChaosMedia {
  const photos = new Map<string, ChaosPhoto>();
  for (const m of sessions.flatMap((s) => s.messages)) {
    if (m.session.way !== "telegram" || m.lines > 1 || m.approval) continue;
    if (random() >= rate) continue;
    const r = random();
    const fate: PhotoFate = r < 0.6 ? "served" : r < 0.85 ? "slow" : "failing";
    m.photo = {
      fileId: `chaosphoto-${m.marker}`,
      fate,
      delayMs: fate === "slow" ? 300 + Math.floor(random() * 900) : 0,
    };
    photos.set(m.marker, m.photo);
  }
  return { photos, seen: new Map(), wrong: [], asked: new Map() };
}

/** A Telegram update as the driver shaped it, made a photo message when `m` carries one. */
export function photoUpdate(
  update: { message?: Record<string, unknown> },
  m: ChaosMessage,
): object {
  const photo = m.photo;
  if (!photo || !update.message) return update;
  const { text, ...message } = update.message;
  const size = photoBytes(m.marker).length;
  return {
    ...update,
    message: {
      ...message,
      caption: text,
      photo: [{
        file_id: photo.fileId,
        file_unique_id: photo.fileId,
        width: 1,
        height: 1,
        file_size: size,
      }],
    },
  };
}

const _FILE = /^\/file\/bot[^/]+\/photos\/([A-Za-z0-9_-]+)\.png$/;

/**
 * The fake Telegram's file API for the run's photos: `getFile` names a file path, the file server
 * answers its bytes (after a pause when slow; 500 when failing). Undefined: not a media call.
 */
export function mediaRoute(
  media: ChaosMedia,
  token: string,
): (call: FakeCall) => Promise<FakeAnswer> | undefined {
  const byFile = new Map([...media.photos].map(([marker, p]) => [p.fileId, { marker, ...p }]));
  const count = (fileId: string) => {
    const asked = media.asked.get(fileId) ?? { getFile: 0, served: 0 };
    media.asked.set(fileId, asked);
    return asked;
  };
  return (call) => {
    if (call.path === `/bot${token}/getFile`) {
      const photo = byFile.get(String(call.body?.file_id));
      if (!photo) {
        return Promise.resolve({
          status: 400,
          body: { ok: false, error_code: 400, description: "Bad Request: invalid file_id" },
        });
      }
      count(photo.fileId).getFile++;
      return Promise.resolve({
        status: 200,
        body: {
          ok: true,
          result: {
            file_id: photo.fileId,
            file_unique_id: photo.fileId,
            file_size: photoBytes(photo.marker).length,
            file_path: `photos/${photo.fileId}.png`,
          },
        },
      });
    }
    const file = _FILE.exec(call.path);
    if (!file || !call.path.startsWith(`/file/bot${token}/`)) return undefined;
    const photo = byFile.get(file[1]);
    if (!photo) return Promise.resolve({ status: 404, body: { ok: false, error_code: 404 } });
    if (photo.fate === "failing") return Promise.resolve({ status: 500, body: { ok: false } });
    return new Promise((resolve) =>
      setTimeout(() => {
        count(photo.fileId).served++;
        resolve({
          status: 200,
          body: photoBytes(photo.marker),
          headers: { "content-type": "image/png" },
        });
      }, photo.delayMs)
    );
  };
}

/** Notes which photo a model call carried in its last user message (the fake model's hook). */
export function observeMedia(media: ChaosMedia, req: FakeModelRequest): void {
  const marker = CHAOS_MARKER.exec(req.lastUserText)?.[0];
  // deno-lint-ignore no-explicit-any
  const lastUser = ((req.body?.messages ?? []) as any[]).findLast((m) => m?.role === "user");
  const parts = Array.isArray(lastUser?.content) ? lastUser.content : [];
  for (const part of parts) {
    const url = part?.type === "image_url" ? String(part.image_url?.url ?? "") : "";
    const data = /^data:image\/png;base64,(.*)$/.exec(url)?.[1];
    if (!url) continue;
    const bytes = (data ? decodeBase64(data) : null) ?? new Uint8Array();
    const own = marker !== undefined && media.photos.has(marker) &&
      _same(bytes, photoBytes(marker));
    if (own) media.seen.set(marker, (media.seen.get(marker) ?? 0) + 1);
    else {media.wrong.push(
        `the model call for ${marker ?? "no message"} carried ${url.slice(0, 60)}`,
      );}
  }
}

function _same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The notice baton gives for a medium it could not read (lib/media/resolve_media.ts). */
const _UNREAD = /I couldn't read the photo/;

/**
 * The media rows: every photo message answered with the model having seen its own bytes, or with
 * the one notice saying it could not be read (a failed turn's notice aside, counted with the
 * failures); no model call with another message's image. Exactly once is the platform rows' check
 * (a photo's reply carries its marker like any echo).
 */
export function verifyMedia(obs: ChaosObservation, tally: Tally): ChaosFigure[] {
  const media = obs.media;
  if (!media || !obs.ways.includes("telegram")) return [];
  tally.row(MEDIA_LABELS.photos, false, ["telegram"]);
  tally.row(MEDIA_LABELS.unseen, true, ["telegram"]);
  tally.row(MEDIA_LABELS.wrong, true, ["telegram"]);
  const byMarker = new Map(obs.sessions.flatMap((s) => s.messages).map((m) => [m.marker, m]));
  let seen = 0, unread = 0, noticeOnServed = 0, noReply = 0;
  for (const [marker, photo] of media.photos) {
    const m = byMarker.get(marker);
    if (!m?.accepted) continue;
    tally.add(MEDIA_LABELS.photos, "telegram");
    const posts = obs.shown.filter((p) =>
      p.way === "telegram" && p.chat === String(m.session.chatId) &&
      CHAOS_MARKER.exec(p.text)?.[0] === marker
    );
    const notice = posts.some((p) => _UNREAD.test(p.text));
    if (media.seen.get(marker)) seen++;
    if (notice) unread++;
    if (notice && photo.fate !== "failing") noticeOnServed++;
    if (!posts.length) noReply++;
    else if (!media.seen.get(marker) && !notice) {
      tally.add(
        MEDIA_LABELS.unseen,
        "telegram",
        1,
        `${marker}'s photo (${photo.fate}) was answered, never shown to the model, no notice`,
      );
    }
  }
  for (const problem of media.wrong) tally.add(MEDIA_LABELS.wrong, "telegram", 1, problem);
  const fates = (fate: PhotoFate) =>
    [...media.photos.values()].filter((p) => p.fate === fate).length;
  const asked = [...media.asked.values()];
  return [
    fig(
      "photos served / slow / failing (share of Telegram messages)",
      `${fates("served")} / ${fates("slow")} / ${fates("failing")} (${
        Math.round(100 * media.photos.size / Math.max(1, _telegram(obs)))
      } %)`,
    ),
    fig(
      "photos the model saw / said unread (of them served) / answered by a failure notice",
      `${seen} / ${unread} (${noticeOnServed}) / ${noReply}`,
    ),
    fig(
      "getFile calls / downloads served / photos downloaded again (a turn rerun after a kill)",
      `${asked.reduce((n, a) => n + a.getFile, 0)} / ${asked.reduce((n, a) => n + a.served, 0)} / ${
        asked.filter((a) => a.served > 1).length
      }`,
    ),
  ];
}

function _telegram(obs: ChaosObservation): number {
  return obs.sessions.filter((s) => s.way === "telegram").reduce(
    (n, s) => n + s.messages.length,
    0,
  );
}
