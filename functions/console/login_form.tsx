// The console's first screen: asks for an API key and checks it against the API before keeping it; browser (preact).
import { useState } from "preact/hooks";
import { ApiClient, ApiError, errorText } from "./api_client.ts";

/** Asks for an API key; `onLogin` gets a client once the API accepted it. */
export function LoginForm(props: { onLogin: (api: ApiClient) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const api = new ApiClient(key.trim());
    setChecking(true);
    setError(null);
    try {
      await api.get("/v1/models"); // any route behind the key: 401 when it is wrong
      props.onLogin(api);
    } catch (e) {
      setError(
        e instanceof ApiError
          ? e.status === 401 ? "That API key was not accepted." : `The API refused: ${errorText(e)}`
          : `The API did not answer: ${errorText(e)}`,
      );
    } finally {
      setChecking(false);
    }
  };

  return (
    <form class="login card" onSubmit={submit}>
      <h1>baton console</h1>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autocomplete="off"
        value={key}
        onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        required
        autofocus
      />
      <p class="hint">
        Kept in this tab only (sessionStorage) and sent as a bearer header.
      </p>
      <button type="submit" disabled={checking || !key.trim()}>
        {checking ? "Checking…" : "Open console"}
      </button>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}
