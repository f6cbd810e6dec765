// Bench floor: a Worker that only forwards the chat completion to the model and returns its JSON or relays its SSE; workerd.

interface Env {
  LLM_BASE_URL: string;
  LLM_API_KEY?: string;
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const res = await fetch(`${env.LLM_BASE_URL}/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${env.LLM_API_KEY ?? ""}`,
      },
      body: await req.text(),
    });
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
      return new Response(res.body, {
        status: res.status,
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    return Response.json(await res.json(), { status: res.status });
  },
};
