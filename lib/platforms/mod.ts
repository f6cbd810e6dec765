// The table of webhook platforms, each adapter in files of its own and loaded on first use; runtime-neutral.
import type { PlatformAdapter } from "../chat/mod.ts";

/**
 * A webhook platform as the route table knows it before its adapter is loaded: its name, whether
 * a GET on its URL is answered (`PlatformAdapter.handshake`), and how to load the adapter.
 */
export interface PlatformEntry {
  /** `POST /webhooks/<name>`, and the adapter's `name`. */
  readonly name: string;
  /** Whether the adapter answers a GET on its URL (WhatsApp's subscription handshake). */
  readonly handshake: boolean;
  /** The adapter; its modules are evaluated on the first call, once per isolate. */
  load(): Promise<PlatformAdapter>;
}

/**
 * Every webhook baton serves at `POST /webhooks/<name>`: the chat platforms, and the generic
 * Standard Webhooks caller, whose deliveries are answered with their turn's outcome. Each adapter
 * is a dynamic import: a Worker evaluates only the platforms it is sent, and none at start-up
 * (ten adapters with their parsers were a fifth of start-up's CPU; bench phase 18).
 */
export const PLATFORMS: readonly PlatformEntry[] = [
  _entry("telegram", false, async () => (await import("./telegram.ts")).telegramAdapter),
  _entry("slack", false, async () => (await import("./slack.ts")).slackAdapter),
  _entry("discord", false, async () => (await import("./discord.ts")).discordAdapter),
  _entry("github", false, async () => (await import("./github.ts")).githubAdapter),
  _entry("whatsapp", true, async () => (await import("./whatsapp.ts")).whatsappAdapter),
  _entry("line", false, async () => (await import("./line.ts")).lineAdapter),
  _entry("twilio", false, async () => (await import("./twilio.ts")).twilioAdapter),
  _entry("teams", false, async () => (await import("./teams.ts")).teamsAdapter),
  _entry("google-chat", false, async () => (await import("./google_chat.ts")).googleChatAdapter),
  _entry("generic", false, async () => (await import("./generic.ts")).genericAdapter),
];

let _all: Promise<readonly PlatformAdapter[]> | undefined;

/**
 * Every adapter of `PLATFORMS`, loaded, in its order: the reply table of the objects that send
 * (a session's replies, the access object's notices), which may send to any platform.
 */
export function platformAdapters(): Promise<readonly PlatformAdapter[]> {
  const all = _all ??= Promise.all(PLATFORMS.map((platform) => platform.load()));
  all.catch(() => {
    if (_all === all) _all = undefined;
  });
  return all;
}

/** One entry, its load shared by every caller (a failed load is tried again by the next). */
function _entry(
  name: string,
  handshake: boolean,
  load: () => Promise<PlatformAdapter>,
): PlatformEntry {
  let loading: Promise<PlatformAdapter> | undefined;
  return {
    name,
    handshake,
    load() {
      const once = loading ??= load();
      once.catch(() => {
        if (loading === once) loading = undefined;
      });
      return once;
    },
  };
}
