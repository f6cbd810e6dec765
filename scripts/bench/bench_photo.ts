// Bench photo: the bytes the fake Telegram serves for every photo, and its getFile and file-download answers; Deno.

/**
 * Size of the bench photo: a phone photo as Telegram keeps its largest size is 100–300 KB; 64 KB
 * keeps the run light while the download, the R2 write and the model request still carry real
 * bytes.
 */
export const BENCH_PHOTO_BYTES = 64 * 1024;

/** A JPEG by its signature (what baton reads the type from), then filler: nothing decodes it. */
export const BENCH_PHOTO: Uint8Array<ArrayBuffer> = (() => {
  const bytes = new Uint8Array(BENCH_PHOTO_BYTES);
  bytes.set([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1, 1, 0, 0, 1]);
  for (let i = 16; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 0xff;
  return bytes;
})();

/**
 * The fake Bot API's answer to a file request, or undefined for any other: `getFile` gives every
 * `file_id` the path `photos/<file_id>.jpg` and the photo's size, and `/file/bot<token>/<path>`
 * serves the photo's bytes, as api.telegram.org does.
 */
export function telegramFileAnswer(
  path: string,
  body: { file_id?: unknown },
): Response | undefined {
  if (path.startsWith("/file/bot")) {
    return new Response(BENCH_PHOTO, { headers: { "content-type": "application/octet-stream" } });
  }
  if (path.endsWith("/getFile")) {
    const fileId = String(body.file_id ?? "");
    return Response.json({
      ok: true,
      result: {
        file_id: fileId,
        file_unique_id: `${fileId}-u`,
        file_size: BENCH_PHOTO_BYTES,
        file_path: `photos/${fileId}.jpg`,
      },
    });
  }
  return undefined;
}

/** A message's `photo` field: two sizes, smallest first, the largest (`fileId`) last. */
export function benchPhotoSizes(fileId: string): unknown[] {
  return [
    { file_id: `${fileId}-thumb`, file_unique_id: `${fileId}-t`, width: 90, height: 90 },
    {
      file_id: fileId,
      file_unique_id: `${fileId}-u`,
      width: 1280,
      height: 960,
      file_size: BENCH_PHOTO_BYTES,
    },
  ];
}
