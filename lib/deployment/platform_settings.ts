// The settings table's platform part: the generic webhook, each chat platform and email; runtime-neutral.
import type { Setting } from "./setting_types.ts";

/** The generic webhook, each chat platform and email: part of {@link SETTINGS} (settings.ts). */
export const PLATFORM_SETTINGS = {
  // Platforms: the generic webhook.
  WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:generic",
    secret: true,
    shown: "unset → route refused (403)",
    description: "`whsec_<base64>` secret of `/webhooks/generic`",
  },
  // Telegram.
  TELEGRAM_BOT_TOKEN: {
    kind: "string",
    group: "platform:telegram",
    secret: true,
    description: "the bot's token from @BotFather",
  },
  TELEGRAM_WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:telegram",
    secret: true,
    description: "the webhook's `secret_token`: 1–256 of `A-Z a-z 0-9 _ -`",
  },
  TELEGRAM_API_ROOT: {
    kind: "url",
    group: "platform:telegram",
    default: "https://api.telegram.org",
    description: "the Bot API's root",
  },
  // Slack.
  SLACK_SIGNING_SECRET: {
    kind: "string",
    group: "platform:slack",
    secret: true,
    description: "Basic Information → Signing Secret",
  },
  SLACK_BOT_TOKEN: {
    kind: "string",
    group: "platform:slack",
    secret: true,
    description: "the bot token (`xoxb-…`)",
  },
  SLACK_API_ROOT: {
    kind: "url",
    group: "platform:slack",
    default: "https://slack.com/api",
    description: "the Web API's root",
  },
  // Discord.
  DISCORD_PUBLIC_KEY: {
    kind: "string",
    group: "platform:discord",
    secret: true,
    description: "the application's Public Key (interactions are verified with it)",
  },
  DISCORD_APPLICATION_ID: {
    kind: "string",
    group: "platform:discord",
    secret: true,
    description: "the application's id; no bot token is needed",
  },
  DISCORD_API_ROOT: {
    kind: "url",
    group: "platform:discord",
    default: "https://discord.com/api/v10",
    description: "the HTTP API's root",
  },
  // GitHub.
  GITHUB_WEBHOOK_SECRET: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the repository webhook's secret (a random string)",
  },
  GITHUB_TOKEN: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the bot account's token with Issues (and Pull requests) read & write",
  },
  GITHUB_BOT_LOGIN: {
    kind: "string",
    group: "platform:github",
    secret: true,
    description: "the bot account's login (e.g. `batonbot`): a comment mentioning it starts a turn",
  },
  GITHUB_API_ROOT: {
    kind: "url",
    group: "platform:github",
    default: "https://api.github.com",
    description: "the REST API's root (GitHub Enterprise Server: `https://HOST/api/v3`)",
  },
  // WhatsApp.
  WHATSAPP_APP_SECRET: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the Meta app's secret (signs every delivery)",
  },
  WHATSAPP_ACCESS_TOKEN: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the access token replies are sent with",
  },
  WHATSAPP_VERIFY_TOKEN: {
    kind: "string",
    group: "platform:whatsapp",
    secret: true,
    description: "the verify token of the webhook's `GET` handshake",
  },
  WHATSAPP_PHONE_NUMBER_ID: {
    kind: "string",
    group: "platform:whatsapp",
    description: "the business phone number's id (a var or secret)",
  },
  WHATSAPP_API_ROOT: {
    kind: "url",
    group: "platform:whatsapp",
    default: "https://graph.facebook.com/v21.0",
    description: "the Graph API's root",
  },
  // LINE.
  LINE_CHANNEL_SECRET: {
    kind: "string",
    group: "platform:line",
    secret: true,
    description: "the channel secret (signs every delivery)",
  },
  LINE_CHANNEL_ACCESS_TOKEN: {
    kind: "string",
    group: "platform:line",
    secret: true,
    description: "the channel access token replies are pushed with",
  },
  LINE_API_ROOT: {
    kind: "url",
    group: "platform:line",
    default: "https://api.line.me",
    description: "the Messaging API's root",
  },
  LINE_DATA_API_ROOT: {
    kind: "url",
    group: "platform:line",
    default: "https://api-data.line.me",
    description: "the root media sent to the bot are downloaded from (the message content API)",
  },
  // Twilio.
  TWILIO_ACCOUNT_SID: {
    kind: "string",
    group: "platform:twilio",
    secret: true,
    description: "the account's SID",
  },
  TWILIO_AUTH_TOKEN: {
    kind: "string",
    group: "platform:twilio",
    secret: true,
    description: "the account's auth token (signs every request, `X-Twilio-Signature`)",
  },
  TWILIO_API_ROOT: {
    kind: "url",
    group: "platform:twilio",
    default: "https://api.twilio.com",
    description: "the REST API's root",
  },
  // Microsoft Teams.
  TEAMS_APP_ID: {
    kind: "string",
    group: "platform:teams",
    secret: true,
    description: "the bot's Microsoft App ID (the audience of the Bot Connector's tokens)",
  },
  TEAMS_APP_PASSWORD: {
    kind: "string",
    group: "platform:teams",
    secret: true,
    description: "the bot's client secret (replies are sent with a token it buys)",
  },
  TEAMS_TENANT_ID: {
    kind: "string",
    group: "platform:teams",
    description: "a single-tenant bot's tenant: its token comes from that tenant's endpoint",
  },
  TEAMS_OPENID_URL: {
    kind: "url",
    group: "platform:teams",
    default: "https://login.botframework.com/v1/.well-known/openidconfiguration",
    description: "where the Bot Connector's signing keys are found",
  },
  TEAMS_TOKEN_URL: {
    kind: "url",
    group: "platform:teams",
    shown:
      "`https://login.microsoftonline.com/<TEAMS_TENANT_ID or botframework.com>/oauth2/v2.0/token`",
    description: "where the bot's token is bought",
  },
  // Google Chat.
  GOOGLE_CHAT_AUDIENCE: {
    kind: "string",
    group: "platform:google_chat",
    secret: true,
    description: "the project number, or the endpoint URL exactly as configured, that Google " +
      "Chat names as the audience of its tokens",
  },
  GOOGLE_CHAT_SERVICE_ACCOUNT: {
    kind: "json",
    group: "platform:google_chat",
    secret: true,
    description: "the service account's whole key JSON (its private key signs the token " +
      "assertion and is never logged)",
  },
  GOOGLE_CHAT_ADDON_PROJECT_NUMBER: {
    kind: "string",
    group: "platform:google_chat",
    description: "a Workspace add-on app's project number: its tokens come from that project's " +
      "add-on service agent (with a URL audience)",
  },
  GOOGLE_CHAT_JWKS_URL: {
    kind: "url",
    group: "platform:google_chat",
    shown: "Chat's keys, or Google's OIDC keys for a URL audience",
    description: "where the keys of Chat's tokens are found",
  },
  GOOGLE_CHAT_TOKEN_URL: {
    kind: "url",
    group: "platform:google_chat",
    default: "https://oauth2.googleapis.com/token",
    description: "where the service account's token is bought",
  },
  GOOGLE_CHAT_API_ROOT: {
    kind: "url",
    group: "platform:google_chat",
    default: "https://chat.googleapis.com/v1",
    description: "the Chat API's root",
  },
  // Email.
  EMAIL_FROM: {
    kind: "string",
    group: "platform:email",
    shown: "the address the mail was sent to",
    description: "the address replies and notices come from (a domain on Email Routing; the " +
      "`EMAIL_OUT` `send_email` binding sends them)",
  },
  EMAIL_ALLOWED_DOMAINS: {
    kind: "list",
    group: "platform:email",
    shown: "any domain",
    description: "comma-separated sender domains whose mail is read at all (others are dropped " +
      "unanswered); senders still pass access control, so with `email:*` in `ALLOWED_USERS` " +
      "everyone at these domains may write",
  },
  EMAIL_REQUIRE_AUTH: {
    kind: "switch",
    group: "platform:email",
    default: "on",
    description: "refuse mail whose sender Email Routing did not authenticate (DMARC pass, or " +
      "SPF or DKIM pass for the From domain)",
  },
} as const satisfies Record<string, Setting>;
