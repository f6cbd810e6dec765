// The fake platform's record of one call and its answer to it, shared by the fake and its upload checks for tests; Deno.

/** One request the fake received. */
export interface PlatformCall {
  method: string;
  /** Path without the origin, e.g. "/botTOKEN/sendMessage". */
  path: string;
  headers: Headers;
  /**
   * JSON parsed; a form (Twilio) as an object of its fields; a multipart upload (Telegram's
   * `sendPhoto`, Discord's `files[0]`) as an object of its fields, each file an `UploadedFile`;
   * raw bytes (`application/octet-stream`: Slack's upload to its upload URL) as an `UploadedFile`
   * named by the path's last segment; else the text.
   */
  // deno-lint-ignore no-explicit-any
  body: any;
  /** Arrival order across `calls` and `signals`. */
  order: number;
}

/** What the fake answers to one call. */
export interface PlatformAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}
