// The chat screen: a session's transcript, the message box, the reply streaming from the runs API, Stop (and Escape); browser (preact).
import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiClient, errorText } from "./api_client.ts";
import { ApprovalCard } from "./approval_card.tsx";
import { noteSession } from "./console_storage.ts";
import { type LiveRun, RunFollower } from "./run_follower.ts";
import { FINAL_PHASES, type RunPhase } from "./run_state.ts";
import { msText } from "./time_text.ts";
import { MediaList } from "./media_list.tsx";
import type { SnapshotMedium } from "../../lib/session/snapshot_media.ts";

interface _Message {
  role: string;
  content: string;
  /** Its images and files (references; the bytes are read by MediaList). */
  media?: SnapshotMedium[];
}

const _PHASES: Record<RunPhase, string> = {
  sending: "sending…",
  queued: "queued behind another turn",
  running: "replying…",
  waiting_for_approval: "waiting for approval",
  completed: "done",
  failed: "failed",
  cancelled: "stopped",
};

/**
 * Chat in one session. `sessionId` is its runs API id (null: a platform session, shown read
 * only); `sessionKey` its key, null until the first run of a new conversation names it.
 */
export function ChatView(props: {
  api: ApiClient;
  sessionId: string | null;
  sessionKey: string | null;
  onSessionKey: (key: string) => void;
}) {
  const { api, sessionId } = props;
  const [key, setKey] = useState(props.sessionKey);
  const [messages, setMessages] = useState<_Message[]>([]);
  const [live, setLive] = useState<LiveRun | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const follower = useRef<RunFollower | null>(null);
  const keyRef = useRef(key);
  keyRef.current = key;
  const box = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);

  const loadTranscript = async (at: string | null = keyRef.current) => {
    if (!at) return;
    try {
      const state = await api.get<{ messages: _Message[] }>(
        `/v1/sessions/${encodeURIComponent(at)}`,
      );
      setMessages(state.messages);
      setError(null);
    } catch (e) {
      setError(`Could not load the conversation: ${errorText(e)}`);
    }
  };

  useEffect(() => {
    void loadTranscript();
    if (!sessionId) return;
    const f = new RunFollower(api, sessionId, {
      onChange: setLive,
      onEnd: async (run) => {
        if (keyRef.current) noteSession(keyRef.current, run.input);
        // A completed turn is in the transcript now; a stopped or failed one stays shown as it ended.
        if (run.view.phase === "completed") {
          await loadTranscript();
          // Unless a next message went out meanwhile: its run is the one shown now.
          setLive((now) =>
            now?.runId === run.runId && FINAL_PHASES.has(now.view.phase) ? null : now
          );
        }
      },
      onSessionKey: (k) => {
        setKey(k);
        keyRef.current = k;
        props.onSessionKey(k);
      },
    });
    follower.current = f;
    f.resume();
    return () => f.dispose();
  }, [api, sessionId]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape" && follower.current?.busy) {
        event.preventDefault();
        follower.current.stop();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => end.current?.scrollIntoView?.({ block: "nearest" }), [messages, live]);
  // The message box takes the keyboard when the chat opens (autofocus works on page load only).
  useEffect(() => box.current?.focus(), [sessionId]);

  const busy = live !== null && !FINAL_PHASES.has(live.view.phase);
  const send = () => {
    const text = draft.trim();
    if (!text || busy || !follower.current) return;
    if (live) void loadTranscript(); // the stopped or failed run shown so far is in it now
    follower.current.send(text);
    if (keyRef.current) noteSession(keyRef.current, text);
    setDraft("");
  };
  const onKeyDown = (event: KeyboardEvent) => {
    // Enter sends; Shift+Enter is a new line; an IME composition's Enter is the IME's.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  };

  // Tool calls have no text (the snapshot gives ""); their results are shown folded. A message
  // of images or files only has no text either, and is shown.
  const shown = messages.filter((m) => m.role !== "system" && (m.content || m.media?.length));
  const media = (m: _Message) =>
    key && m.media?.length ? <MediaList api={api} sessionKey={key} media={m.media} /> : null;
  return (
    <section class="chat">
      <div class="toolbar">
        <h2 class="key">{key ?? "New conversation"}</h2>
        {key && <a href={`#/inspect/${encodeURIComponent(key)}`}>Inspector</a>}
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      <ol class="transcript" aria-live="polite">
        {shown.map((m, i) =>
          m.role === "tool"
            ? (
              <li key={i} class="tool-result">
                <details>
                  <summary>tool result</summary>
                  <pre>{m.content}</pre>
                </details>
                {media(m)}
              </li>
            )
            : (
              <li key={i} class={`bubble ${m.role}`}>
                <span class="who">{m.role === "user" ? "You" : "Agent"}</span>
                {m.content && <div class="text">{m.content}</div>}
                {media(m)}
              </li>
            )
        )}
        {live && (
          <>
            <li class="bubble user pending">
              <span class="who">You</span>
              <div class="text">{live.input}</div>
            </li>
            <li
              class={`bubble assistant live phase-${live.view.phase}`}
              data-phase={live.view.phase}
              data-run-id={live.runId ?? ""}
            >
              <span class="who">
                Agent ·{" "}
                <span class="phase">{live.stopping ? "stopping…" : _PHASES[live.view.phase]}</span>
              </span>
              {live.view.tools.map((t) => (
                <div
                  class={`tool ${t.done ? "done" : "running"}`}
                  key={t.callId}
                  data-tool={t.tool}
                >
                  {t.done ? "✓" : "…"} <code>{t.tool}</code>
                  {t.done
                    ? ` ${t.error ? `failed: ${t.error}` : "done"} in ${
                      msText(t.durationMs ?? null)
                    }`
                    : " running"}
                </div>
              ))}
              <div class="text reply">{live.view.text}</div>
              {live.view.approval && (
                <ApprovalCard
                  approval={live.view.approval}
                  onAnswer={(choice) => void follower.current?.answer(choice)}
                />
              )}
              {live.view.error && <p class="error" role="alert">{live.view.error}</p>}
            </li>
          </>
        )}
      </ol>
      <div ref={end} class="scroll-end" />
      {sessionId
        ? (
          <form
            class="composer"
            onSubmit={(e) => {
              e.preventDefault();
              send();
            }}
          >
            <label for="message" class="sr-only">Message</label>
            <textarea
              id="message"
              ref={box}
              rows={2}
              placeholder={busy
                ? "Esc stops the reply"
                : "Message (Enter sends, Shift+Enter: new line)"}
              value={draft}
              onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
              onKeyDown={onKeyDown}
            />
            {busy
              ? (
                <button type="button" class="stop" onClick={() => follower.current?.stop()}>
                  Stop
                </button>
              )
              : <button type="submit" disabled={!draft.trim()}>Send</button>}
          </form>
        )
        : (
          <p class="hint">
            A platform session: its chat happens on the platform. The transcript and the inspector
            are shown here.
          </p>
        )}
    </section>
  );
}
