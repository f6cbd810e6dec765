// Transports that carry events to a client (SSE, NDJSON streams) and the tee over them; any runtime with web streams.

/** Anything that carries events to one peer. */
export interface Transport<E> {
  /** Sends one event; false only when the peer is gone. A programming error (e.g. an event that cannot be serialised) throws. */
  write(event: E): boolean;
  /** Ends the stream; safe to call twice. */
  close(): void;
}

const _encoder = new TextEncoder();

/** A transport over a ReadableStream of bytes; `encode` turns an event into its wire text. */
export class StreamTransport<E> implements Transport<E> {
  /** The body to hand to a Response or return over RPC. */
  readonly readable: ReadableStream<Uint8Array>;
  readonly #encode: (event: E) => string;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;
  /** When a frame began to wait for its reader; null while the reader has taken everything. */
  #waitingSince: number | null = null;

  constructor(encode: (event: E) => string) {
    this.#encode = encode;
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      // Called when the reader has drained the queue (and once at the start): nothing waits.
      pull: () => {
        this.#waitingSince = null;
      },
      cancel: () => {
        this.#open = false;
      },
    });
  }

  /** Whether the peer is still there. */
  get open(): boolean {
    return this.#open;
  }

  /**
   * Since when (ms since the epoch) a written frame has waited for the reader; null when the
   * reader has taken every frame. A reader that takes nothing for long has stopped reading: the
   * runtime may drop a response whose client left without cancelling its stream.
   */
  waitingSince(): number | null {
    return this.#waitingSince;
  }

  write(event: E): boolean {
    const frame = this.#encode(event); // throws on a programming error, even when the peer is gone
    if (!this.#open) return false;
    this.#waitingSince ??= Date.now();
    this.#controller.enqueue(_encoder.encode(frame));
    return true;
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#controller.close();
  }
}

/** One server-sent event: data (JSON, or a raw string such as "[DONE]") with an optional name, or a comment. */
export type SseEvent = { event?: string; data: unknown } | { comment: string };

/** Encodes an SSE frame; U+2028/U+2029 are escaped. Throws on unserialisable data or a bad name/comment. */
export function encodeSse(event: SseEvent): string {
  if ("comment" in event) {
    if (/[\r\n]/.test(event.comment)) throw new TypeError("SSE comment must be one line");
    return `: ${event.comment}\n\n`;
  }
  if (event.event !== undefined && !/^[A-Za-z0-9._-]+$/.test(event.event)) {
    throw new TypeError(`invalid SSE event name: ${JSON.stringify(event.event)}`);
  }
  if (typeof event.data === "string" && /[\r\n]/.test(event.data)) {
    throw new TypeError("raw SSE data must be one line");
  }
  const name = event.event === undefined ? "" : `event: ${event.event}\n`;
  return `${name}data: ${_json(event.data, true)}\n\n`;
}

/** An SSE response body. */
export function sseTransport(): StreamTransport<SseEvent> {
  return new StreamTransport(encodeSse);
}

/** A newline-delimited JSON stream (events between the session object and the Worker). */
export function ndjsonTransport<E>(): StreamTransport<E> {
  return new StreamTransport<E>((event) => `${_json(event, false)}\n`);
}

/** Reads a newline-delimited JSON stream event by event. */
export async function* readNdjson<E>(stream: ReadableStream<Uint8Array>): AsyncGenerator<E> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line) yield JSON.parse(line) as E;
    }
  }
  // A last line without its newline is a write cut short, not an event: it is dropped.
}

/**
 * One primary and any number of secondaries. The primary's result (and exception) decides each
 * write; a secondary that fails or whose peer is gone is dropped silently.
 */
export class TransportTee<E> implements Transport<E> {
  readonly #primary: Transport<E>;
  readonly #secondaries = new Set<Transport<E>>();

  constructor(primary: Transport<E>) {
    this.#primary = primary;
  }

  /** Adds a secondary (a live subscriber). */
  add(secondary: Transport<E>): void {
    this.#secondaries.add(secondary);
  }

  /** How many secondaries are attached. */
  get secondaries(): number {
    return this.#secondaries.size;
  }

  write(event: E): boolean {
    const result = this.#primary.write(event);
    for (const secondary of this.#secondaries) {
      let alive = false;
      try {
        alive = secondary.write(event);
      } catch {
        alive = false;
      }
      if (!alive) this.#drop(secondary);
    }
    return result;
  }

  close(): void {
    try {
      this.#primary.close();
    } finally {
      for (const secondary of [...this.#secondaries]) this.#drop(secondary);
    }
  }

  #drop(secondary: Transport<E>): void {
    this.#secondaries.delete(secondary);
    try {
      secondary.close();
    } catch {
      // a secondary's failure never reaches the primary's caller
    }
  }
}

function _json(data: unknown, rawStrings: boolean): string {
  const text = rawStrings && typeof data === "string" ? data : JSON.stringify(data);
  if (text === undefined) throw new TypeError("event data does not serialise to JSON");
  return text.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}
