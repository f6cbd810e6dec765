// `npm run setup -- slack|discord|github|teams|google-chat`: the console steps with this deployment's URLs filled in, and `--check` by a test delivery; Deno.
import type { SetupContext } from "./_context.ts";
import { hmacHex, probeDelivery } from "./_probe.ts";

/**
 * The bot scopes baton uses on Slack (docs/platforms/slack.md): mentions, DMs, replies, files in and out,
 * and the history scopes that let a reply cut off by a crash be looked for before it is resent.
 */
export const SLACK_SCOPES = [
  "app_mentions:read",
  "im:history",
  "chat:write",
  "files:read",
  "files:write",
  "channels:history",
  "groups:history",
  "mpim:history",
];

/** A Slack app manifest (YAML) for this deployment: events and button clicks to `url`. */
export function slackManifest(url: string): string {
  return [
    "display_information:",
    "  name: baton",
    "features:",
    "  app_home:",
    "    messages_tab_enabled: true",
    "    messages_tab_read_only_enabled: false",
    "  bot_user:",
    "    display_name: baton",
    "    always_online: true",
    "oauth_config:",
    "  scopes:",
    "    bot:",
    ...SLACK_SCOPES.map((s) => `      - ${s}`),
    "settings:",
    "  event_subscriptions:",
    `    request_url: ${url}`,
    "    bot_events:",
    "      - app_mention",
    "      - message.im",
    "  interactivity:",
    "    is_enabled: true",
    `    request_url: ${url}`,
    "  org_deploy_enabled: false",
    "  socket_mode_enabled: false",
    "  token_rotation_enabled: false",
  ].join("\n");
}

/** Prints `lines` as numbered steps under a heading. */
function _steps(ctx: SetupContext, title: string, lines: string[]): void {
  ctx.note(`${title}: only the console can do this — follow these steps:`);
  lines.forEach((line, i) => ctx.print(`  ${i + 1}. ${line}`));
}

/** Slack: the app manifest (scopes, events, interactivity) and the secrets to set. */
export function slackSteps(ctx: SetupContext): Promise<void> {
  _steps(ctx, "Slack", [
    "https://api.slack.com/apps → Create New App → From an app manifest → pick the workspace, " +
    "paste the manifest below (YAML) → Create → Install to Workspace.",
    "Basic Information → Signing Secret: wrangler secret put SLACK_SIGNING_SECRET; OAuth & " +
    "Permissions → Bot User OAuth Token (xoxb-…): wrangler secret put SLACK_BOT_TOKEN.",
    "Event Subscriptions: Slack verifies the Request URL once the secrets are deployed (Retry).",
    "Invite the bot to channels; then check: npm run setup -- slack --check",
  ]);
  ctx.print("\n" + slackManifest(ctx.webhookUrl) + "\n");
  return Promise.resolve();
}

/** Slack `--check`: a signed `url_verification`, its challenge echoed back (no turn). */
export async function slackCheck(ctx: SetupContext): Promise<void> {
  const values = ctx.need("SLACK_SIGNING_SECRET");
  if (!values) return;
  const challenge = `baton-setup-${crypto.randomUUID()}`;
  const body = JSON.stringify({ type: "url_verification", token: "setup", challenge });
  const ts = String(Math.floor(Date.now() / 1000));
  await probeDelivery(ctx, {
    headers: {
      "content-type": "application/json",
      "x-slack-request-timestamp": ts,
      "x-slack-signature": `v0=${await hmacHex(values[0], `v0:${ts}:${body}`)}`,
    },
    body,
    secretName: "SLACK_SIGNING_SECRET",
    accepted: (answer) => answer.body?.challenge === challenge,
  });
}

/** GitHub: the repository webhook's settings. */
export function githubSteps(ctx: SetupContext): Promise<void> {
  _steps(ctx, "GitHub", [
    "The repository (or organisation) → Settings → Webhooks → Add webhook.",
    `Payload URL: ${ctx.webhookUrl}`,
    "Content type: application/json; Secret: the value of GITHUB_WEBHOOK_SECRET.",
    'Events: "Let me select individual events" → Issue comments only → Add webhook.',
    "Set GITHUB_WEBHOOK_SECRET, GITHUB_TOKEN and GITHUB_BOT_LOGIN (wrangler secret put NAME); " +
    "then check: npm run setup -- github --check",
  ]);
  return Promise.resolve();
}

/** GitHub `--check`: a signed `ping`, which baton answers without a turn. */
export async function githubCheck(ctx: SetupContext): Promise<void> {
  const values = ctx.need("GITHUB_WEBHOOK_SECRET");
  if (!values) return;
  const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 0 });
  await probeDelivery(ctx, {
    headers: {
      "content-type": "application/json",
      "x-github-event": "ping",
      "x-github-delivery": crypto.randomUUID(),
      "x-hub-signature-256": `sha256=${await hmacHex(values[0], body)}`,
    },
    body,
    secretName: "GITHUB_WEBHOOK_SECRET",
  });
}

/** Discord: the interactions endpoint and a slash command. */
export function discordSteps(ctx: SetupContext): Promise<void> {
  _steps(ctx, "Discord", [
    "https://discord.com/developers/applications → your app → General Information: " +
    "wrangler secret put DISCORD_APPLICATION_ID and wrangler secret put DISCORD_PUBLIC_KEY.",
    `Interactions Endpoint URL: ${ctx.webhookUrl} → Save (Discord tests it: deploy the ` +
    "secrets first).",
    "Register the /ask command once (a bot token from the Bot page, used only here): " +
    'curl -X POST -H "Authorization: Bot $BOT_TOKEN" -H "content-type: application/json" ' +
    "https://discord.com/api/v10/applications/$DISCORD_APPLICATION_ID/commands " +
    `-d '{"name":"ask","description":"Ask the agent","options":[{"type":3,"name":"prompt",` +
    `"description":"Your message"},{"type":11,"name":"file","description":"A photo or document"}]}'`,
  ]);
  return Promise.resolve();
}

/** Microsoft Teams: the bot's messaging endpoint. */
export function teamsSteps(ctx: SetupContext): Promise<void> {
  _steps(ctx, "Microsoft Teams", [
    "Azure portal → your Azure Bot → Configuration → Messaging endpoint: " + ctx.webhookUrl,
    "Note the Microsoft App ID and create a client secret: wrangler secret put TEAMS_APP_ID, " +
    "wrangler secret put TEAMS_APP_PASSWORD (single tenant: TEAMS_TENANT_ID as a var).",
    "Channels → add Microsoft Teams; add the bot to a Teams app manifest (personal, team and " +
    "group chat scopes) and install it.",
  ]);
  return Promise.resolve();
}

/** Google Chat: the Chat API configuration. */
export function googleChatSteps(ctx: SetupContext): Promise<void> {
  _steps(ctx, "Google Chat", [
    "Google Cloud console → enable the Google Chat API → Chat API → Configuration: an app " +
    "name, Interactive features on, 1:1 messages and spaces enabled.",
    `Connection settings → HTTP endpoint URL: ${ctx.webhookUrl}; Authentication Audience: ` +
    "Project Number (then GOOGLE_CHAT_AUDIENCE is that number).",
    "IAM → a service account → Keys → add a JSON key: wrangler secret put " +
    "GOOGLE_CHAT_SERVICE_ACCOUNT (the whole JSON) and wrangler secret put GOOGLE_CHAT_AUDIENCE.",
  ]);
  return Promise.resolve();
}
