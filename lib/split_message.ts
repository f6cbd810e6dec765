// Splits a long reply into platform-sized parts on paragraph, line or word boundaries; runtime-neutral.

/** Splits `text` into parts of at most `limit` characters; joined back they hold every character. */
export function splitMessage(text: string, limit: number): string[] {
  if (text.length <= limit) return [text];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const cut = _cutPoint(rest, limit);
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) parts.push(rest);
  return parts;
}

function _cutPoint(text: string, limit: number): number {
  const window = text.slice(0, limit);
  const min = Math.floor(limit / 2);
  for (const sep of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(sep);
    if (at >= min) return at + sep.length;
  }
  // No boundary: cut hard, but never between the halves of a surrogate pair.
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}
