// The inspector screen: one session's inbox rows, reply parts, run timelines and last context (GET /v1/sessions/{key}/inspect); browser (preact).
import { useEffect, useState } from "preact/hooks";
import { type ApiClient, errorText } from "./api_client.ts";
import type { SessionInspection } from "../../lib/session/inspection.ts";
import { agoText, clockText, msText } from "./time_text.ts";
import { TranscriptSection, type TranscriptSnapshot } from "./transcript_section.tsx";

/** The API's answer, typed where the server builds it. */
type _Inspection = SessionInspection;

const _STATUS: Record<string, string> = {
  waiting_for_approval: "waiting for approval",
  in_doubt: "in doubt",
};

/** Shows what session `sessionKey` holds, read on open and on Refresh. */
export function InspectorView(props: { api: ApiClient; sessionKey: string }) {
  const [data, setData] = useState<_Inspection | null>(null);
  const [transcript, setTranscript] = useState<TranscriptSnapshot | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);

  useEffect(() => {
    let live = true;
    const at = `/v1/sessions/${encodeURIComponent(props.sessionKey)}`;
    // The inspection and the transcript (its messages, with their media): read together.
    Promise.all([
      props.api.get<_Inspection>(`${at}/inspect`),
      props.api.get<TranscriptSnapshot>(at),
    ])
      .then(([d, t]) => {
        if (!live) return;
        setData(d);
        setTranscript(t);
        setError(null);
      })
      .catch((e) => {
        if (live) setError(errorText(e));
      });
    return () => {
      live = false;
    };
  }, [props.api, props.sessionKey, loads]);

  return (
    <section class="inspector">
      <div class="toolbar">
        <h2 class="key">Inspector · {props.sessionKey}</h2>
        <a href={`#/chat/${encodeURIComponent(props.sessionKey)}`}>Chat</a>
        <button type="button" class="secondary" onClick={() => setLoads(loads + 1)}>Refresh</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {data && (
        <>
          <p class="hint">
            {data.claim.seq === null
              ? "Idle: no turn holds the session."
              : `Message ${data.claim.seq} holds the session since ${
                clockText(data.claim.started_at)
              }.`}
          </p>
          <h3>Inbox</h3>
          <ul class="rows inbox-rows">
            {data.inbox.map((m) => (
              <li key={m.seq} data-seq={m.seq}>
                <span class="seq">#{m.seq}</span>
                <span class={`badge status-${m.status}`}>
                  {m.command ? "command" : _STATUS[m.status] ?? m.status}
                </span>
                <span class="when">{agoText(m.received_at)}</span>
                <span class="dur">{msText(m.duration_ms)}</span>
                {m.attempts > 1 && <span class="attempts">{m.attempts} attempts</span>}
                {m.merged_into !== null && (
                  <span>
                    {m.status === "steered" ? "steered into" : "merged into"} #{m.merged_into}
                  </span>
                )}
                <span class="text">{m.text}</span>
                {m.error && <span class="error">{m.error.type}: {m.error.message}</span>}
              </li>
            ))}
          </ul>
          {data.inbox.length === 0 && <p class="hint">No messages.</p>}
          <h3>Reply parts</h3>
          <ul class="rows part-rows">
            {data.parts.map((p) => (
              <li key={p.id} data-status={p.status}>
                <span class="seq">{p.seq === null ? "—" : `#${p.seq}`}</span>
                <span class="kind">{p.kind} {p.index + 1}/{p.count}</span>
                <span class={`badge part-${p.status}`}>{_STATUS[p.status] ?? p.status}</span>
                <span class="when">{p.sent_at ? `sent ${clockText(p.sent_at)}` : ""}</span>
                {p.platform && <span class="platform">{p.platform}</span>}
                <span class="text">{p.text}</span>
                {p.error && <span class="error">{p.error}</span>}
              </li>
            ))}
          </ul>
          {data.parts.length === 0 && (
            <p class="hint">Nothing sent to a chat (API sessions answer their caller).</p>
          )}
          {transcript && (
            <TranscriptSection
              api={props.api}
              sessionKey={props.sessionKey}
              snapshot={transcript}
              compactions={data.compactions ?? []}
            />
          )}
          <h3>Run timeline</h3>
          {data.runs.length === 0 && <p class="hint">No turn has run in this session lately.</p>}
          {data.runs.map((run) => (
            <div class="run" key={run.seq}>
              <h4>Run of message #{run.seq}</h4>
              <ol class="timeline">
                {run.events.filter((e) => e.type !== "message.delta").map((e, i) => (
                  <li key={i}>
                    <span class="when">{clockText(e.at)}</span>
                    <span class="elapsed">+{msText(e.elapsed_ms)}</span>
                    <code>{e.type}</code>
                    <span class="detail">{_detail(e.data)}</span>
                    {e.duration_ms !== null && (
                      <span class="dur">took {msText(e.duration_ms)}</span>
                    )}
                  </li>
                ))}
              </ol>
              {run.events.some((e) => e.type === "message.delta") && (
                <p class="hint">
                  {run.events.filter((e) => e.type === "message.delta").length} text deltas
                </p>
              )}
            </div>
          ))}
          <h3>Last turn's context</h3>
          <pre class="context">{JSON.stringify(data.last_turn, null, 2)}</pre>
        </>
      )}
    </section>
  );
}

/** What an event names: a model call's step, a tool, a reply part, an error. */
function _detail(data: Record<string, unknown>): string {
  const said = [
    typeof data.step === "number" ? `step ${data.step}` : "",
    typeof data.tool === "string" ? data.tool : "",
    typeof data.part === "string" ? `part ${data.part}` : "",
    typeof data.error === "string" ? data.error : _message(data.error),
  ];
  return said.filter((s) => s).join(" · ");
}

function _message(error: unknown): string {
  const message = error && typeof error === "object"
    ? (error as { message?: unknown }).message
    : "";
  return typeof message === "string" ? message : "";
}
