// Reads a text/event-stream body into events (fetch, not EventSource: the API key goes in a header); browser and Deno.

/** One server-sent event: its `event:` name (or "message") and its `data:` lines joined. */
export interface SseMessage {
  event: string;
  data: string;
}

/** Yields the events of an SSE body in order; comments (keep-alives) are skipped. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // Events end at a blank line; a line ends in \n, \r\n or \r.
      const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
      buffer = blocks.pop() ?? "";
      for (const block of blocks) {
        const message = _parse(block);
        if (message) yield message;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function _parse(block: string): SseMessage | null {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split(/\r\n|\n|\r/)) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { event, data: data.join("\n") } : null;
}
