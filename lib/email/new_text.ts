// A mail body's new text: the quoted history below a reply and the signature cut off; runtime-neutral.

/**
 * What the writer of a reply wrote now: the body up to the first quoted-history marker (an
 * "On … wrote:" line, Outlook's "-----Original Message-----" or its underscore rule followed by
 * "From:", a "From: … Sent:" block), without `>`-quoted lines and without the signature below a
 * `-- ` line. Trimmed; "" when nothing new is left.
 */
export function newText(body: string): string {
  const lines = body.replace(/\r\n?/g, "\n").split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    // The signature delimiter ("-- ", RFC 3676), and mail apps' "--" alone.
    if (line === "-- " || trimmed === "--") break;
    if (_HISTORY.some((marker) => marker.test(trimmed))) break;
    // "On Mon, 1 Jul 2026 at 10:00, Alice <a@example.com>" wrapped before "wrote:".
    if (/^On\s.+/.test(trimmed) && /^.*\bwrote:$/.test((lines[i + 1] ?? "").trim())) break;
    if (
      /^From:\s/.test(trimmed) &&
      lines.slice(i + 1, i + 5).some((l) => /^(Sent|Date):\s/.test(l.trim()))
    ) {
      break;
    }
    if (trimmed.startsWith(">")) continue;
    kept.push(line);
  }
  return kept.join("\n").trim();
}

const _HISTORY = [
  /^On\s.+\bwrote:$/,
  /^-{2,}\s*Original Message\s*-{2,}$/i,
  /^-{2,}\s*Forwarded message\s*-{2,}$/i,
  /^_{20,}$/,
];
