// Fake OpenAI-compatible `/audio/transcriptions` server on loopback: records the exact audio bytes, file name and model of each upload; Deno or Node (node:http), never in a Worker.
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One received `POST /v1/audio/transcriptions`, its multipart fields read. */
export interface FakeTranscription {
  /** The `file` field's bytes, exactly as uploaded. */
  bytes: Uint8Array;
  /** The `file` field's file name (the services choose a decoder by its extension). */
  filename: string;
  model: string;
  /** The `authorization` header ("" when none). */
  authorization: string;
}

/** Handle on a running fake transcription server. */
export interface FakeTranscriber {
  /** Base URL for `TRANSCRIBE_BASE_URL`, e.g. "http://127.0.0.1:PORT/v1". */
  url: string;
  /** Every upload received, in arrival order. */
  requests: FakeTranscription[];
  /** What the next uploads are answered: a transcript, or an HTTP status to fail with. */
  answer: { text: string } | { status: number };
  /** Forgets the requests; answers "hello from the voice note" again. */
  reset(): void;
  close(): Promise<void>;
}

const _DEFAULT = { text: "hello from the voice note" };

/** Starts a fake transcription server on 127.0.0.1 (random port). */
export async function startFakeTranscriber(): Promise<FakeTranscriber> {
  const fake: FakeTranscriber = {
    url: "",
    requests: [],
    answer: _DEFAULT,
    reset() {
      this.requests.length = 0;
      this.answer = _DEFAULT;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || !req.url?.endsWith("/audio/transcriptions")) {
      return send(404, { error: { message: "not found" } });
    }
    try {
      const form = await _form(req);
      // Typed loosely: the Workers and Deno typings of FormData entries disagree.
      const file = form.get("file") as unknown as { name?: string; arrayBuffer?: unknown } | null;
      if (!file || typeof file !== "object" || typeof file.arrayBuffer !== "function") {
        return send(400, { error: { message: "no file" } });
      }
      fake.requests.push({
        bytes: new Uint8Array(await (file as Blob).arrayBuffer()),
        filename: file.name ?? "",
        model: String(form.get("model") ?? ""),
        authorization: req.headers.authorization ?? "",
      });
    } catch {
      return send(400, { error: { message: "not multipart" } });
    }
    const answer = fake.answer;
    if ("status" in answer) return send(answer.status, { error: { message: "failed" } });
    send(200, { text: answer.text });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

/** The request's multipart body, parsed by the runtime's own `Request.formData()`. */
async function _form(req: IncomingMessage): Promise<FormData> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return await new Request("http://fake.test/", {
    method: "POST",
    headers: { "content-type": req.headers["content-type"] ?? "" },
    body: Buffer.concat(chunks),
  }).formData();
}
