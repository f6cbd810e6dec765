// Server-sent events writer over a ReadableStream; any runtime with web streams.
const _encoder = new TextEncoder();

/**
 * An SSE response body. `write` returns false only when the peer is gone (the stream was
 * cancelled or closed); a value that cannot be serialised throws.
 */
export class SseWriter {
  readonly readable: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;

  constructor() {
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
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

  /** Sends `data: <json>`; a string is sent as is (e.g. "[DONE]"). */
  write(data: unknown): boolean {
    const text = typeof data === "string" ? data : JSON.stringify(data);
    if (text === undefined) throw new TypeError("SSE data does not serialise to JSON");
    return this.#send(
      `data: ${text.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029")}\n\n`,
    );
  }

  /** Sends a comment line (keep-alive). */
  comment(text: string): boolean {
    if (/[\r\n]/.test(text)) throw new TypeError("SSE comment must be one line");
    return this.#send(`: ${text}\n\n`);
  }

  /** Ends the stream. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#controller.close();
  }

  #send(frame: string): boolean {
    if (!this.#open) return false;
    this.#controller.enqueue(_encoder.encode(frame));
    return true;
  }
}
