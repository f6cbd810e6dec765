// The inspector's transcript: every message still kept (with its images and files), each compaction's summary set before the range it covers; browser (preact).
import type { ApiClient } from "./api_client.ts";
import type { InspectedCompaction } from "../../lib/session/inspection.ts";
import type { SnapshotMedium } from "../../lib/session/snapshot_media.ts";
import { MediaList } from "./media_list.tsx";
import { clockText } from "./time_text.ts";

/** `GET /v1/sessions/{key}`'s transcript part. */
export interface TranscriptSnapshot {
  messages: { role: string; content: string; media?: SnapshotMedium[] }[];
  /** Older messages of the conversation not in `messages`. */
  omitted: number;
}

/** Characters of a message shown before it is folded. */
const _PREVIEW = 400;

/**
 * The current conversation's messages, oldest first, numbered by position from 1. A summary is
 * shown where its range starts, naming the range; the messages it covers stay listed (marked
 * `compacted`): the transcript keeps every original, only later turns see the summary instead.
 */
export function TranscriptSection(props: {
  api: ApiClient;
  sessionKey: string;
  snapshot: TranscriptSnapshot;
  compactions: InspectedCompaction[];
}) {
  const { snapshot, compactions } = props;
  const first = snapshot.omitted;
  // A summary whose range starts among the messages left out is shown before the first one listed.
  const startsAt = (c: InspectedCompaction) => Math.max(c.from, first);
  const covered = (pos: number) => compactions.some((c) => c.from <= pos && pos <= c.through);
  return (
    <>
      <h3>Transcript</h3>
      {first > 0 && <p class="hint">{first} older messages are not listed.</p>}
      {snapshot.messages.length === 0 && <p class="hint">No messages in this conversation.</p>}
      <ol class="rows transcript-rows">
        {snapshot.messages.map((m, i) => {
          const pos = first + i;
          return [
            ...compactions.filter((c) => startsAt(c) === pos).map((c) => (
              <li
                key={`summary-${c.from}`}
                class="summary"
                data-from={c.from + 1}
                data-through={c.through + 1}
              >
                <span class="badge">summary</span>
                <span class="range">
                  messages {c.from + 1}–{c.through + 1} ({c.messages} summarised)
                </span>
                <span class="when">
                  {c.seq === null ? "" : `by #${c.seq} · `}
                  {clockText(c.created_at)}
                </span>
                <pre class="text">{c.summary}</pre>
              </li>
            )),
            <li
              key={pos}
              class={covered(pos) ? "original compacted" : "original"}
              data-pos={pos + 1}
            >
              <span class="seq">{pos + 1}</span>
              <span class="role">{m.role}</span>
              {m.content && (
                <span class="text">
                  {m.content.length > _PREVIEW ? `${m.content.slice(0, _PREVIEW)}…` : m.content}
                </span>
              )}
              {m.media?.length
                ? <MediaList api={props.api} sessionKey={props.sessionKey} media={m.media} />
                : null}
            </li>,
          ];
        })}
      </ol>
    </>
  );
}
