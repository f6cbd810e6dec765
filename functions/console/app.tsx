// The console's shell: login, then the sessions, chat and inspector screens, routed by the URL hash; browser (preact).
import { useEffect, useState } from "preact/hooks";
import { ApiClient } from "./api_client.ts";
import { ChatView } from "./chat_view.tsx";
import { savedKey, saveKey } from "./console_storage.ts";
import { InspectorView } from "./inspector_view.tsx";
import { LoginForm } from "./login_form.tsx";
import { apiSessionId, newSessionId } from "./session_keys.ts";
import { SessionList } from "./session_list.tsx";
import { UsageView } from "./usage_view.tsx";
import { UserView } from "./user_view.tsx";

/** A screen and its argument, from `location.hash` (the session key is no secret; the API key never goes there). */
type _Route =
  | { screen: "sessions" }
  | { screen: "chat"; key: string }
  | { screen: "new"; id: string }
  | { screen: "inspect"; key: string }
  | { screen: "usage" }
  | { screen: "users"; user: string | null };

function _route(hash: string): _Route {
  const [, screen, arg] = /^#\/([a-z]+)\/?(.*)$/.exec(hash) ?? [];
  const value = arg ? decodeURIComponent(arg) : "";
  if (screen === "chat" && value) return { screen: "chat", key: value };
  if (screen === "new" && value) return { screen: "new", id: value };
  if (screen === "inspect" && value) return { screen: "inspect", key: value };
  if (screen === "usage") return { screen: "usage" };
  if (screen === "users") return { screen: "users", user: value || null };
  return { screen: "sessions" };
}

/** The whole console. */
export function App() {
  const [api, setApi] = useState(() => {
    const key = savedKey();
    return key ? new ApiClient(key) : null;
  });
  const [route, setRoute] = useState(() => _route(location.hash));

  useEffect(() => {
    const onHash = () => setRoute(_route(location.hash));
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  // A new conversation has no key until its first run names it (and no session object until then:
  // nothing is read for it, so opening one and leaving creates nothing).
  const newConversation = () => {
    location.hash = `#/new/${newSessionId()}`;
  };
  const logout = () => {
    saveKey(null);
    setApi(null);
  };

  if (!api) {
    return (
      <main class="page">
        <LoginForm
          onLogin={(client) => {
            saveKey(client.key);
            setApi(client);
          }}
        />
      </main>
    );
  }
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">baton</a>
        <nav>
          <a href="#/">Sessions</a>
          <a href="#/usage">Usage</a>
          <a href="#/users">Users</a>
          <button type="button" class="link" onClick={newConversation}>New conversation</button>
          <button type="button" class="link" onClick={logout}>Log out</button>
        </nav>
      </header>
      <main class="page">
        {route.screen === "sessions" && (
          <SessionList
            api={api}
            onNew={newConversation}
            onOpen={(key) => location.hash = `#/chat/${encodeURIComponent(key)}`}
          />
        )}
        {(route.screen === "chat" || route.screen === "new") && (
          <ChatView
            key={route.screen === "chat" ? route.key : route.id}
            api={api}
            sessionId={route.screen === "chat" ? apiSessionId(route.key) : route.id}
            sessionKey={route.screen === "chat" ? route.key : null}
            // Named by its first run: the URL now says where a reload comes back to, without
            // a hashchange that would rebuild the chat mid-run.
            onSessionKey={(key) =>
              history.replaceState(null, "", `#/chat/${encodeURIComponent(key)}`)}
          />
        )}
        {route.screen === "inspect" && <InspectorView api={api} sessionKey={route.key} />}
        {route.screen === "usage" && <UsageView api={api} />}
        {route.screen === "users" && (
          <UserView
            api={api}
            user={route.user}
            onUser={(user) => location.hash = `#/users/${encodeURIComponent(user)}`}
          />
        )}
      </main>
    </>
  );
}
