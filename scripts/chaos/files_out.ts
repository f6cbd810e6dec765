// The chaos run's files out: a share of Telegram turns answer with an image of their own (the fake model's reply `images`), which baton uploads with sendPhoto under the fake's faults, held sends and kills; each must reach its own chat once (a resend behind the note counted), never be lost; Deno.
import { encodeBase64 } from "../../lib/runtime/mod.ts";
import { RESEND_NOTE } from "../../lib/chat/mod.ts";
import { IMAGES_NOT_SENT } from "../../lib/agent/reply_images.ts";
import type { FakeAnswer, FakeCall, Sabotage } from "./fake_server.ts";
import { photoBytes } from "./media.ts";
import type { ChaosFilesOut, ChaosObservation } from "./observation.ts";
import { CHAOS_MARKER, type ChaosSession } from "./plan.ts";
import type { ChaosFigure } from "./report.ts";
import { fig, type Tally } from "./tally.ts";

/** Row labels of the files-out checks (Telegram's column). */
export const FILES_OUT_LABELS = {
  files: "replies carrying a file (sent with sendPhoto)",
  twice: "files sent twice unmarked (same bytes, same message, one chat)",
  lost: "files lost (the reply shown, its file never sent nor said unsent)",
  elsewhere: "files sent to another chat, or not their message's bytes",
} as const;

/** The bytes of the file `marker`'s reply carries: a PNG with the marker after IEND (not a photo in's). */
export function fileBytes(marker: string): Uint8Array {
  return photoBytes(`out:${marker}`);
}

/** The message marker a file's bytes name, if they name one. */
function _markerOf(bytes: Uint8Array): string | undefined {
  const tail = new TextDecoder().decode(bytes.subarray(Math.max(0, bytes.length - 64)));
  return /chaos-photo:out:(s\d+m\d+)$/.exec(tail)?.[1];
}

/**
 * A share `rate` of the Telegram messages (one-line, asking no approval, not sent as a steer) are
 * answered with a file. From a stream of its own, so a seed's other draws stay as they were.
 */
export function planFilesOut(
  sessions: ChaosSession[],
  rate: number,
  random: () => number,
  steers: ReadonlySet<string> = new Set(),
): ChaosFilesOut {
  const markers = new Set<string>();
  for (const m of sessions.flatMap((s) => s.messages)) {
    if (m.session.way !== "telegram" || m.lines > 1 || m.approval) continue;
    if (random() < rate && !steers.has(m.marker)) markers.add(m.marker);
  }
  return { markers, sent: [], answered: 0 };
}

/** The images the fake model's answer to `marker` carries: its file as a data URL, or none. */
export function fileImages(
  files: ChaosFilesOut | undefined,
  marker: string,
): { images?: string[] } {
  if (!files?.markers.has(marker)) return {};
  files.answered++;
  return { images: [`data:image/png;base64,${encodeBase64(fileBytes(marker))}`] };
}

const _UPLOAD = /\/(sendPhoto|sendDocument)$/;

/** Whether a fake platform call is a Telegram file upload (a held send can wait for one). */
export function isUpload(call: FakeCall): boolean {
  return _UPLOAD.test(call.path);
}

/** A multipart file field as the fake server parsed it. */
interface _Upload {
  filename: string;
  type: string;
  bytes: Uint8Array;
}

/**
 * The fake Telegram's sendPhoto and sendDocument: the upload's bytes, chat and caption recorded
 * (the note stripped from the caption under the "strip-note" sabotage), answered as the Bot API
 * does. Undefined: not an upload.
 */
export function filesRoute(
  files: ChaosFilesOut,
  token: string,
  sabotage?: Sabotage,
): (call: FakeCall) => FakeAnswer | undefined {
  let ids = 1_000_000;
  return (call) => {
    const method = _UPLOAD.exec(call.path)?.[1];
    if (!method || !call.path.startsWith(`/bot${token}/`)) return undefined;
    const upload = call.body?.[method === "sendPhoto" ? "photo" : "document"] as
      | _Upload
      | undefined;
    if (call.body?.chat_id === undefined || !(upload?.bytes instanceof Uint8Array)) {
      return {
        status: 400,
        body: { ok: false, error_code: 400, description: "Bad Request: there is no file" },
      };
    }
    const caption = _caption(call);
    const marker = _markerOf(upload.bytes);
    const expected = marker ? fileBytes(marker) : undefined;
    files.sent.push({
      chat: String(call.body.chat_id),
      method,
      ...(marker ? { marker } : {}),
      exact: !!expected && expected.length === upload.bytes.length &&
        expected.every((b, i) => b === upload.bytes[i]),
      marked: caption.startsWith(RESEND_NOTE) && sabotage !== "strip-note",
      at: Date.now(),
    });
    return { status: 200, body: { ok: true, result: { message_id: ++ids } } };
  };
}

/** What the fake's record of requests says an upload sent: its caption, then the file it named. */
export function uploadText(call: FakeCall): string | undefined {
  const method = _UPLOAD.exec(call.path)?.[1];
  if (!method) return undefined;
  const upload = call.body?.[method === "sendPhoto" ? "photo" : "document"] as _Upload | undefined;
  const named = upload?.bytes instanceof Uint8Array ? _markerOf(upload.bytes) : undefined;
  return `${_caption(call)}[file ${named ?? upload?.filename ?? "none"}]`;
}

/** An upload's caption, its line breaks as sent (a multipart form carries them as CRLF). */
function _caption(call: FakeCall): string {
  return String(call.body?.caption ?? "").replaceAll("\r\n", "\n");
}

/**
 * The files-out rows: no file shown twice without the note in one chat, none lost (its reply's
 * text shown, the file neither sent nor named unsent in that text), none in another chat or with
 * other bytes. A reply that failed (a failure notice) owes no file.
 */
export function verifyFilesOut(obs: ChaosObservation, tally: Tally): ChaosFigure[] {
  const files = obs.filesOut;
  if (!files || !obs.ways.includes("telegram")) return [];
  const T = "telegram" as const;
  tally.row(FILES_OUT_LABELS.files, false, [T]);
  tally.row(FILES_OUT_LABELS.twice, true, [T]);
  tally.row(FILES_OUT_LABELS.lost, true, [T]);
  tally.row(FILES_OUT_LABELS.elsewhere, true, [T]);
  const byMarker = new Map(obs.sessions.flatMap((s) => s.messages).map((m) => [m.marker, m]));
  const shown = new Map<string, number>();
  let resent = 0, unsentSaid = 0;
  for (const sent of files.sent) {
    const m = sent.marker ? byMarker.get(sent.marker) : undefined;
    if (!m || !files.markers.has(m.marker) || !sent.exact) {
      tally.add(FILES_OUT_LABELS.elsewhere, T, 1, `a file naming ${sent.marker ?? "nothing"}`);
      continue;
    }
    if (String(m.session.chatId) !== sent.chat) {
      tally.add(FILES_OUT_LABELS.elsewhere, T, 1, `${m.marker}'s file went to chat ${sent.chat}`);
      continue;
    }
    const times = shown.get(m.marker) ?? 0;
    shown.set(m.marker, times + 1);
    if (times > 0 && sent.marked) resent++;
    else if (times > 0) {
      tally.add(FILES_OUT_LABELS.twice, T, 1, `${m.marker}'s file shown again without the note`);
    }
  }
  for (const marker of files.markers) {
    const m = byMarker.get(marker);
    if (!m?.accepted) continue;
    const texts = obs.shown.filter((p) =>
      p.way === T && p.chat === String(m.session.chatId) &&
      CHAOS_MARKER.exec(p.text)?.[0] === marker
    );
    // No reply of its own (a failure notice, a turn still out): no file owed.
    if (!texts.length) continue;
    tally.add(FILES_OUT_LABELS.files, T);
    if (shown.has(marker)) continue;
    if (texts.some((p) => p.text.includes(IMAGES_NOT_SENT))) unsentSaid++;
    else tally.add(FILES_OUT_LABELS.lost, T, 1, `${marker}'s reply was shown, its file never`);
  }
  const telegram = obs.sessions.filter((s) => s.way === T).reduce(
    (n, s) => n + s.messages.length,
    0,
  );
  return [
    fig(
      "files out: planned (share of Telegram messages) / model answers with one / uploads stored",
      `${files.markers.size} (${
        Math.round(100 * files.markers.size / Math.max(1, telegram))
      } %) / ${files.answered} / ${files.sent.length}`,
    ),
    fig(
      "files out resent behind the note after a kill or 5xx / said unsent in the reply",
      `${resent} / ${unsentSaid}`,
    ),
  ];
}
