// Bench phase "telegram photo": webhook → reply for a photo message next to a text message, on warm chats of a baton with its MEDIA bucket; Deno.
import { pct } from "./client.ts";
import { BENCH_PHOTO_BYTES } from "./bench_photo.ts";
import { r2, type Report } from "./report.ts";
import type { Baton, Rig } from "./rig.ts";
import type { TelegramSample } from "./telegram.ts";

/** Chat ids of this phase (7,300,000+), apart from every other phase's. */
const _TEXT_CHAT = 7_300_001, _PHOTO_CHAT = 7_300_002;

/** What is sent: text in the text chat, a photo in the photo chat, text in the photo chat. */
const _KINDS = ["text", "photo", "after"] as const;
type _Kind = (typeof _KINDS)[number];

const _WARM = 10, _N = 120;

/**
 * Telegram updates on two warm private chats of a fresh baton with `MEDIA` bound, taking turns
 * update by update (the order rotating): a text message in the text chat, a captioned photo in
 * the photo chat, and a text message in the photo chat. Each photo is a new file: getFile and the
 * download from the fake Telegram, the R2 write, and the model sent the image. Every turn of the
 * photo chat also sends the chat's newest images (MEDIA_IMAGES_IN_CONTEXT, 4), read back from R2:
 * the text message there is what those cost without a download. The fake model echoes the text.
 */
export async function telegramPhoto(rig: Rig, report: Report): Promise<void> {
  const firstRequest = rig.fake.requests.length;
  await rig.onFresh(
    rig.baton,
    async (baton) => {
      const { warmUp, samples } = await _alternate(rig, baton);
      _record(report, samples);
      const all = [...warmUp, ..._KINDS.flatMap((kind) => samples[kind])];
      const answered = all.filter((s) => s.ok).length;
      report.check(
        "telegram photo: every update answered (warm-up included)",
        "tg_media_ok",
        answered === all.length,
        `${answered}/${all.length}`,
      );
      // Each photo's model call has the image in its last user message.
      const photoCalls = rig.fake.requests.slice(firstRequest)
        .filter((r) => r.lastUserText.startsWith("tg media photo"));
      const withImage = photoCalls.filter((r) => _lastUserHasImage(r.body)).length;
      report.check(
        "telegram photo: photo turns whose model call carried the image / photos sent",
        "tg_media_images",
        withImage === _WARM + _N && photoCalls.length === _WARM + _N,
        `${withImage} / ${_WARM + _N}`,
      );
    },
    {},
    { media: true },
  );
}

/** The warm-up, then `_N` rounds of one update of each kind, the order rotating. */
async function _alternate(rig: Rig, baton: Baton) {
  const samples: Record<_Kind, TelegramSample[]> = { text: [], photo: [], after: [] };
  let seq = 0;
  const send = (kind: _Kind) => {
    const id = ++seq;
    const text = `tg media ${kind} ${id}`;
    const chatId = kind === "text" ? _TEXT_CHAT : _PHOTO_CHAT;
    const photo = kind === "photo" ? { photo: `bench-photo-${id}` } : {};
    return rig.telegramUpdate(baton, { chatId, messageId: id, text, ...photo });
  };
  const warmUp: TelegramSample[] = [];
  for (let i = 0; i < _WARM; i++) for (const kind of _KINDS) warmUp.push(await send(kind));
  for (let i = 0; i < _N; i++) {
    for (let k = 0; k < _KINDS.length; k++) {
      const kind = _KINDS[(i + k) % _KINDS.length];
      samples[kind].push(await send(kind));
    }
  }
  return { warmUp, samples };
}

function _record(report: Report, samples: Record<_Kind, TelegramSample[]>): void {
  const ms = (kind: _Kind, field: "ack" | "reply", p = 0.5) =>
    pct(samples[kind].map((s) => s[`${field}Ms`]).filter((x) => !Number.isNaN(x)), p);
  for (const field of ["ack", "reply"] as const) {
    const what = field === "ack" ? "ack" : "webhook → reply";
    report.joined(`telegram photo, warm chats: ${what} p50 / p99 (ms), text / photo`, {
      [`tg_media_${field}_p50_ms_text`]: r2(ms("text", field)),
      [`tg_media_${field}_p99_ms_text`]: r2(ms("text", field, 0.99)),
      [`tg_media_${field}_p50_ms_photo`]: r2(ms("photo", field)),
      [`tg_media_${field}_p99_ms_photo`]: r2(ms("photo", field, 0.99)),
    });
    report.joined(`telegram photo: ${what} p50 / p99 (ms), text in the photo chat`, {
      [`tg_media_${field}_p50_ms_after`]: r2(ms("after", field)),
      [`tg_media_${field}_p99_ms_after`]: r2(ms("after", field, 0.99)),
    });
  }
  report.figure("telegram photo: photo size (bytes)", "tg_media_photo_bytes", BENCH_PHOTO_BYTES);
  report.ratio(
    "telegram photo: webhook → reply p50 ratio photo / text (alternating)",
    "tg_media_reply_p50_ratio_photo_text",
    ms("photo", "reply") / ms("text", "reply"),
  );
  report.ratio(
    "telegram photo: webhook → reply p50 ratio, text in the photo chat (4 images in context) / text",
    "tg_media_reply_p50_ratio_after_text",
    ms("after", "reply") / ms("text", "reply"),
  );
  report.ratio(
    "telegram photo: ack p50 ratio photo / text (alternating)",
    "tg_media_ack_p50_ratio_photo_text",
    ms("photo", "ack") / ms("text", "ack"),
  );
}

/** Whether the last user message of a chat completion `body` has an `image_url` part. */
function _lastUserHasImage(body: unknown): boolean {
  const messages = (body as { messages?: { role?: string; content?: unknown }[] })?.messages ?? [];
  const content = messages.findLast((m) => m.role === "user")?.content;
  return Array.isArray(content) &&
    content.some((p) => (p as { type?: unknown })?.type === "image_url");
}
