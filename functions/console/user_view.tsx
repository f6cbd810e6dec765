// The user screen (admin keys): a chat user's usage today and what baton remembers about them, each fact with Forget (as /forget N); browser (preact).
import { useEffect, useState } from "preact/hooks";
import { type ApiClient, ApiError, errorText } from "./api_client.ts";
import { agoText } from "./time_text.ts";
import { costText, tokensText, type UsageFigures, utcDayText } from "./usage_text.ts";

/** `GET /v1/users/{user}/memory`. */
interface _Memory {
  user: string;
  version: number;
  facts: { n: number; text: string; at: number }[];
}

/** Looks up `user` (`platform:user`, or `api:<tenant>:<user>`; null: none yet). */
export function UserView(
  props: { api: ApiClient; user: string | null; onUser: (user: string) => void },
) {
  const { api, user } = props;
  const [typed, setTyped] = useState(user ?? "");
  const [memory, setMemory] = useState<_Memory | null>(null);
  const [usage, setUsage] = useState<UsageFigures | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);
  const path = user ? `/v1/users/${encodeURIComponent(user)}/memory` : "";

  useEffect(() => {
    setTyped(user ?? "");
    setMemory(null);
    setUsage(null);
    if (!user) return;
    let live = true;
    const day = utcDayText(Date.now());
    api.get<_Memory>(path)
      .then((m) => {
        if (!live) return;
        setMemory(m);
        setError(null);
      })
      .catch((e) => live && setError(errorText(e)));
    // API users' usage is their tenant's; only a chat user's is summed on its own.
    if (!user.startsWith("api:")) {
      api.get<{ totals: UsageFigures }>(
        `/v1/usage?day=${day}&user=${encodeURIComponent(user)}`,
      ).then((u) => live && setUsage(u.totals), () => {});
    }
    return () => {
      live = false;
    };
  }, [api, user, loads]);

  const forget = async (n: number) => {
    if (!memory) return;
    try {
      await api.delete(`${path}/${n}?version=${memory.version}`);
    } catch (e) {
      // Changed meanwhile (409) or already gone (404): the list read again says what is there.
      if (!(e instanceof ApiError && (e.status === 409 || e.status === 404))) {
        setError(errorText(e));
        return;
      }
    }
    setLoads(loads + 1);
  };

  return (
    <section class="user">
      <div class="toolbar">
        <h2>User</h2>
      </div>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed.trim()) props.onUser(typed.trim());
        }}
      >
        <label for="user-id" class="sr-only">User (platform:user)</label>
        <input
          id="user-id"
          type="search"
          placeholder="platform:user, e.g. telegram:4242 (Enter)"
          value={typed}
          onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
        />
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {usage && (
        <p class="usage-totals">
          Today (UTC): <strong>{tokensText(usage.total_tokens)} tokens</strong> in {usage.turns}
          {" "}
          turns{usage.cost > 0 && <>, cost {costText(usage.cost)}</>}
        </p>
      )}
      {memory && (
        <>
          <h3>Memory</h3>
          {memory.facts.length === 0 && (
            <p class="hint">Nothing is remembered about {memory.user}.</p>
          )}
          <ol class="rows memory-facts">
            {memory.facts.map((fact) => (
              <li key={`${memory.version}-${fact.n}`} data-n={fact.n}>
                <span class="seq">{fact.n}</span>
                <span class="text">{fact.text}</span>
                <span class="when">{agoText(fact.at)}</span>
                <button type="button" class="secondary" onClick={() => void forget(fact.n)}>
                  Forget
                </button>
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
