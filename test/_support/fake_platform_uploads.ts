// The fake platform's uploads: multipart bodies read into fields, and Slack's file flow and Discord's attachments checked as the platforms do, for tests; Deno.
import type { PlatformAnswer, PlatformCall } from "./fake_platform_call.ts";

/** A file a multipart call uploaded (a field of `PlatformCall.body`). */
export interface UploadedFile {
  filename: string;
  type: string;
  bytes: Uint8Array;
}

/** A multipart body as an object: text fields as strings, files as `UploadedFile`s. */
export async function multipartFields(
  req: Request,
): Promise<Record<string, string | UploadedFile>> {
  const fields: Record<string, string | UploadedFile> = {};
  for (const [key, value] of await req.formData()) {
    fields[key] = typeof value === "string" ? value : {
      filename: value.name,
      type: value.type,
      bytes: new Uint8Array(await value.arrayBuffer()),
    };
  }
  return fields;
}

/**
 * The upload calls' checks (see `FakePlatform.respond`): Slack's file flow, which keeps the files
 * it reserved between its calls, and Discord's attachments.
 */
export class FakeUploads {
  /** Slack files reserved by `files.getUploadURLExternal`, by id: their stated length, and bytes once uploaded. */
  readonly #slackFiles = new Map<
    string,
    { filename: string; length: number; bytes?: Uint8Array }
  >();

  /**
   * The answer to an upload call of Slack's file flow or a Discord attachment; null for any other
   * call. `i` is the call's index (it names the Slack file reserved), `origin` the fake's (the
   * upload URL is on it).
   */
  check(call: PlatformCall, i: number, origin: string): PlatformAnswer | null {
    const path = call.path.split("?")[0];
    const form = call.headers.get("content-type")?.startsWith("application/x-www-form-urlencoded");
    const slackError = (error: string) => ({ status: 200, body: { ok: false, error } });
    if (path === "/api/files.getUploadURLExternal") {
      if (!/^Bearer \S+/.test(call.headers.get("authorization") ?? "")) {
        return slackError("not_authed");
      }
      // Slack refuses a JSON body here ("missing required field" though both are present).
      const length = Number(call.body?.length);
      if (!form || !call.body?.filename || !Number.isSafeInteger(length) || length <= 0) {
        return slackError("invalid_arguments");
      }
      const id = `F${i + 1}UP`;
      this.#slackFiles.set(id, { filename: call.body.filename, length });
      return {
        status: 200,
        body: { ok: true, upload_url: `${origin}/slack-upload/${id}`, file_id: id },
      };
    }
    const upload = /^\/slack-upload\/([^/]+)$/.exec(path);
    if (upload) {
      const file = this.#slackFiles.get(upload[1]);
      const bytes = (call.body as UploadedFile | undefined)?.bytes;
      if (!file || !bytes || bytes.length !== file.length) {
        return { status: 400, body: { error: "upload does not match its reservation" } };
      }
      file.bytes = bytes;
      return { status: 200, body: `OK - ${bytes.length}` };
    }
    if (path === "/api/files.completeUploadExternal") {
      let files: { id?: unknown }[] = [];
      try {
        files = JSON.parse(call.body?.files ?? "[]");
      } catch { /* refused below */ }
      if (!form || !Array.isArray(files) || files.length === 0 || !call.body?.channel_id) {
        return slackError("invalid_arguments");
      }
      if (files.some((f) => !this.#slackFiles.get(String(f.id))?.bytes)) {
        return slackError("file_not_found");
      }
      return { status: 200, body: { ok: true, files: files.map((f) => ({ id: f.id })) } };
    }
    const payload = typeof call.body?.payload_json === "string" ? call.body.payload_json : null;
    if (payload && /^\/webhooks\//.test(path)) {
      const attachments = JSON.parse(payload).attachments ?? [];
      const whole = attachments.every((a: { id: number }) =>
        typeof call.body[`files[${a.id}]`] === "object"
      );
      if (!whole) {
        return { status: 400, body: { code: 50035, message: "Invalid Form Body" } };
      }
    }
    return null;
  }

  /** Forgets the Slack files reserved, for the next test. */
  reset(): void {
    this.#slackFiles.clear();
  }
}
