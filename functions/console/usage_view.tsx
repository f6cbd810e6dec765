// The usage screen: a UTC day's tokens (and cost where MODEL_PRICES is set) in total and per session, from GET /v1/usage; browser (preact).
import { useEffect, useState } from "preact/hooks";
import { type ApiClient, errorText } from "./api_client.ts";
import { costText, tokensText, type UsageFigures, utcDayText } from "./usage_text.ts";

/** `GET /v1/usage`'s answer without a filter: the caller's (an admin's: everyone's) day. */
interface _Usage {
  day: string;
  totals: UsageFigures;
  /** The day's sessions, largest first; absent without the session directory. */
  sessions?: (UsageFigures & { session_key: string; platform: string; tenant: string | null })[];
}

/** A day's usage, today (UTC) until another day is picked. */
export function UsageView(props: { api: ApiClient }) {
  const [day, setDay] = useState(() => utcDayText(Date.now()));
  const [data, setData] = useState<_Usage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);

  useEffect(() => {
    let live = true;
    props.api.get<_Usage>(`/v1/usage?day=${encodeURIComponent(day)}`)
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(null);
      })
      .catch((e) => {
        if (live) setError(errorText(e));
      });
    return () => {
      live = false;
    };
  }, [props.api, day, loads]);

  // Money only where something was priced: unset MODEL_PRICES leaves every cost 0.
  const priced = (data?.totals.cost ?? 0) > 0 || (data?.sessions ?? []).some((s) => s.cost > 0);
  return (
    <section class="usage">
      <div class="toolbar">
        <h2>Usage</h2>
        <label for="usage-day" class="sr-only">Day (UTC)</label>
        <input
          id="usage-day"
          type="date"
          value={day}
          onInput={(e) => {
            const value = (e.target as HTMLInputElement).value;
            if (value) setDay(value);
          }}
        />
        <button type="button" class="secondary" onClick={() => setLoads(loads + 1)}>Refresh</button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {data && (
        <>
          <p class="usage-totals" data-total={data.totals.total_tokens}>
            {data.day} (UTC): <strong>{tokensText(data.totals.total_tokens)} tokens</strong>{" "}
            ({tokensText(data.totals.prompt_tokens)} in, {tokensText(data.totals.completion_tokens)}
            {" "}
            out, {tokensText(data.totals.cached_tokens)} cached) in {data.totals.turns} turns
            {priced && (
              <>
                , cost <strong class="cost">{costText(data.totals.cost)}</strong>
              </>
            )}
          </p>
          {data.sessions === undefined && (
            <p class="hint">Per-session rows need the session directory (DIRECTORY).</p>
          )}
          {data.sessions?.length === 0 && <p class="hint">No usage on this day.</p>}
          {!!data.sessions?.length && (
            <div class="table-wrap">
              <table class="usage-rows">
                <thead>
                  <tr>
                    <th scope="col">Session</th>
                    <th scope="col">Tokens</th>
                    <th scope="col">In</th>
                    <th scope="col">Out</th>
                    <th scope="col">Turns</th>
                    {priced && <th scope="col">Cost</th>}
                  </tr>
                </thead>
                <tbody>
                  {data.sessions.map((s) => (
                    <tr key={s.session_key} data-key={s.session_key}>
                      <td>
                        <a href={`#/inspect/${encodeURIComponent(s.session_key)}`}>
                          {s.session_key}
                        </a>
                      </td>
                      <td class="num">{tokensText(s.total_tokens)}</td>
                      <td class="num">{tokensText(s.prompt_tokens)}</td>
                      <td class="num">{tokensText(s.completion_tokens)}</td>
                      <td class="num">{s.turns}</td>
                      {priced && <td class="num">{costText(s.cost)}</td>}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
