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
  /** The adapter; its modules are evaluated on the first call, once per isolate (`import()`). */
  load(): Promise<PlatformAdapter>;
}

/**
 * Every webhook baton serves at `POST /webhooks/<name>`: the chat platforms, and the generic
 * Standard Webhooks caller, whose deliveries are answered with their turn's outcome. Each adapter
 * is a dynamic import: a Worker evaluates only the platforms it is sent, and none at start-up
 * (ten adapters with their parsers were a fifth of start-up's CPU; bench phase 18).
 */
export const PLATFORMS: readonly PlatformEntry[] = [
  _entry("telegram", async () => (await import("./telegram.ts")).telegramAdapter),
  _entry("slack", async () => (await import("./slack.ts")).slackAdapter),
  _entry("discord", async () => (await import("./discord.ts")).discordAdapter),
  _entry("github", async () => (await import("./github.ts")).githubAdapter),
  _entry("whatsapp", async () => (await import("./whatsapp.ts")).whatsappAdapter, true),
  _entry("line", async () => (await import("./line.ts")).lineAdapter),
  _entry("twilio", async () => (await import("./twilio.ts")).twilioAdapter),
  _entry("teams", async () => (await import("./teams.ts")).teamsAdapter),
  _entry("google-chat", async () => (await import("./google_chat.ts")).googleChatAdapter),
  _entry("generic", async () => (await import("./generic.ts")).genericAdapter),
];

/**
 * One row of `PLATFORMS`; `handshake` only for the one platform that has it. Each `load` names its
 * module in a literal `import()`, which the bundler needs to put the adapter in a chunk of its own.
 */
function _entry(
  name: string,
  load: () => Promise<PlatformAdapter>,
  handshake = false,
): PlatformEntry {
  return { name, handshake, load };
}

/**
 * Every adapter of `PLATFORMS`, loaded, in its order: the reply table of the objects that send
 * (a session's replies, the access object's notices), which may send to any platform. Nothing is
 * kept here: `import()` evaluates a module once and gives every later call the same exports.
 */
export function platformAdapters(): Promise<readonly PlatformAdapter[]> {
  return Promise.all(PLATFORMS.map((platform) => platform.load()));
}
