// Splits a long reply into platform-sized parts on paragraph, line or word boundaries; runtime-neutral.

const FENCE = "```";

type _Block = { start: number; end: number; open: string; big: boolean };

/**
 * Splits `text` into parts of at most `limit` characters (UTF-16 code units), cutting at paragraph,
 * then line, then word boundaries, never inside a surrogate pair. A Markdown code block that fits
 * in one part is never cut; a longer one is cut at line breaks, closed with "```" at the end of a
 * part and reopened with its opening line ("```ts") at the start of the next. Apart from those
 * markers, the parts joined back equal `text`.
 *
 * @throws {RangeError} if `limit` is below 16.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (!(limit >= 16)) throw new RangeError(`splitMessage: limit must be at least 16, got ${limit}`);
  const blocks = _fencedBlocks(text, limit);
  const parts: string[] = [];
  let pos = 0;
  let reopen = "";
  while (reopen.length + text.length - pos > limit) {
    const [cut, open] = _cutPoint(text, pos, pos + limit - reopen.length, blocks);
    const body = text.slice(pos, cut);
    parts.push(reopen + body + (open ? (body.endsWith("\n") ? "" : "\n") + FENCE : ""));
    reopen = open ? open + "\n" : "";
    pos = cut;
  }
  parts.push(reopen + text.slice(pos));
  return parts;
}

// Fenced blocks from their opening line's start to their closing line's end (or the text's end).
function _fencedBlocks(text: string, limit: number): _Block[] {
  const lines = [...text.matchAll(/(?:^|(?<=\n))```[^\n]*/g)];
  const blocks: _Block[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const [start, close] = [lines[i].index, lines[i + 1]];
    const end = close ? close.index + close[0].length : text.length;
    blocks.push({ start, end, open: lines[i][0], big: end - start > limit });
  }
  // A long block whose opening line leaves no room to reopen it is cut as plain text.
  return blocks.filter((b) => !b.big || b.open.length + 7 <= limit);
}

// Where to end the part starting at `pos` and ending by `end`, and the fence to reopen after it.
function _cutPoint(text: string, pos: number, end: number, blocks: _Block[]): [number, string] {
  const min = pos + Math.floor((end - pos) / 2);
  for (const sep of ["\n\n", "\n", " "]) {
    let at = text.lastIndexOf(sep, end - sep.length);
    for (; at >= min; at = text.lastIndexOf(sep, at - 1)) {
      const cut = at + sep.length;
      const block = _blockAt(blocks, cut);
      if (!block) return [cut, ""];
      if (_canCutInside(text, block, cut, end)) return [cut, block.open];
    }
  }
  const hard = _isHighSurrogate(text, end - 1) ? end - 1 : end;
  const block = _blockAt(blocks, hard);
  if (!block) return [hard, ""];
  const line = text.lastIndexOf("\n", end - FENCE.length - 1) + 1;
  if (line > pos && _canCutInside(text, block, line, end)) return [line, block.open];
  if (block.start > pos || !block.big) return [block.start > pos ? block.start : hard, ""];
  const inLine = end - FENCE.length - 1;
  return [_isHighSurrogate(text, inLine - 1) ? inLine - 1 : inLine, block.open];
}

function _blockAt(blocks: _Block[], at: number): _Block | undefined {
  return blocks.find((b) => b.start < at && at < b.end);
}

// A too-long block may be cut at a line start past its opening line, leaving room to close it.
function _canCutInside(text: string, block: _Block, at: number, end: number): boolean {
  return block.big && text[at - 1] === "\n" && at > block.start + block.open.length &&
    at + FENCE.length <= end;
}

function _isHighSurrogate(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 0xd800 && code <= 0xdbff;
}
