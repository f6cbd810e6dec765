// What the fake model answers one call with (a step of its script) and the usage it reports, shared by the fake server and the reply it builds; any runtime.

/**
 * Token counts the fake reports for a reply (`usage`; default 1 prompt and 1 completion token);
 * `cached_tokens` goes out as `prompt_tokens_details.cached_tokens`.
 */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** One scripted reply of the fake model. */
export type FakeModelStep =
  | {
    kind: "text";
    text: string;
    delayMs?: number;
    usage?: FakeUsage;
    finish?: "stop" | "length";
    /**
     * Streamed: sends this many of the text's pieces (it goes in 3), then waits for `release()`
     * (or the client going away) before the rest — a reply caught mid-stream.
     */
    holdAfter?: number;
    /** Streamed: waits this long between pieces — a reply written slowly, for previews. */
    pieceDelayMs?: number;
    /** Streamed: how many pieces the text goes in (default 3). */
    pieces?: number;
    /**
     * Images the reply carries (`data:` or https URLs): in `message.images` as OpenRouter sends
     * them (default; streamed as `delta.images`, one chunk each), or as `image_url` parts of
     * `content` after its text (`imagesIn: "content"`; a stream sends them as `delta.images`).
     */
    images?: string[];
    imagesIn?: "images" | "content";
  }
  | {
    kind: "tool_call";
    name: string;
    args: Record<string, unknown>;
    id?: string;
    delayMs?: number;
    usage?: FakeUsage;
    /** Text the model writes before the call ("Let me look…"), streamed in `pieces`. */
    text?: string;
    pieces?: number;
    /** Streamed: waits this long between pieces. */
    pieceDelayMs?: number;
  }
  | { kind: "status"; status: number; retryAfter?: string; body?: unknown }
  /** Waits for `release()` (or client disconnect), then answers like the default echo. */
  | { kind: "hold" };
