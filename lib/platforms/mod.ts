// The table of chat-platform adapters, one file each; runtime-neutral.
import type { PlatformAdapter } from "../chat/mod.ts";
import { discordAdapter } from "./discord.ts";
import { genericAdapter } from "./generic.ts";
import { githubAdapter } from "./github.ts";
import { googleChatAdapter } from "./google_chat.ts";
import { lineAdapter } from "./line.ts";
import { slackAdapter } from "./slack.ts";
import { teamsAdapter } from "./teams.ts";
import { telegramAdapter } from "./telegram.ts";
import { twilioAdapter } from "./twilio.ts";
import { whatsappAdapter } from "./whatsapp.ts";

/**
 * Every webhook baton serves at `POST /webhooks/<name>`: the chat platforms, and the generic
 * Standard Webhooks caller, whose deliveries are answered with their turn's outcome.
 */
export const PLATFORM_ADAPTERS: readonly PlatformAdapter[] = [
  telegramAdapter,
  slackAdapter,
  discordAdapter,
  githubAdapter,
  whatsappAdapter,
  lineAdapter,
  twilioAdapter,
  teamsAdapter,
  googleChatAdapter,
  genericAdapter,
];
