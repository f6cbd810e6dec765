// How much of an OpenAI API request body is media (data URLs, base64 file and audio data) rather than text: the body limit grows with MEDIA_MAX_BYTES, text stays capped; runtime-neutral.

/**
 * The largest request body the OpenAI routes take when media can be stored: `textBytes` for
 * everything but the media, plus one medium of `mediaMaxBytes` as base64 (4 characters per 3
 * bytes) with room for its `data:<type>;base64,` prefix.
 */
export function mediaBodyLimit(textBytes: number, mediaMaxBytes: number): number {
  return textBytes + Math.ceil(mediaMaxBytes / 3) * 4 + 256;
}

/**
 * The characters of `value`'s media payloads: every string that is a `data:` URL (Chat
 * Completions' `image_url.url`, Responses' `image_url` and `file_data`), an `input_audio`'s
 * `data` and any `file_data` (base64). What is left of the body is its text, held to the limit
 * text always had. Iterative: the body is already depth-checked, but a walk never recurses.
 */
export function mediaPayloadChars(value: unknown): number {
  let total = 0;
  const stack: { value: unknown; key: string; parentKey: string }[] = [
    { value, key: "", parentKey: "" },
  ];
  while (stack.length) {
    const { value: at, key, parentKey } = stack.pop()!;
    if (typeof at === "string") {
      const media = at.startsWith("data:") || key === "file_data" ||
        (key === "data" && parentKey === "input_audio");
      if (media) total += at.length;
    } else if (Array.isArray(at)) {
      for (const item of at) stack.push({ value: item, key, parentKey });
    } else if (at && typeof at === "object") {
      for (const [k, v] of Object.entries(at)) stack.push({ value: v, key: k, parentKey: key });
    }
  }
  return total;
}
