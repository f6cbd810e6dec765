// `npm run setup -- <platform> [--check]` against the fake platform APIs on loopback and baton in workerd (Telegram in full; LINE, Slack, GitHub, WhatsApp, Discord); Deno + Miniflare.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { runSetup } from "../scripts/setup.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { githubDriver } from "./_support/drivers/github.ts";
import { lineDriver } from "./_support/drivers/line.ts";
import { slackDriver } from "./_support/drivers/slack.ts";
import { telegramBotToken, telegramDriver as driver } from "./_support/drivers/telegram.ts";
import { whatsappDriver } from "./_support/drivers/whatsapp.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file, configured as the drivers' deployment (their webhook secrets and
// tokens); Discord is left unconfigured, its route disabled.
const OTHERS = {
  ...lineDriver.vars(),
  ...slackDriver.vars(),
  ...githubDriver.vars(),
  ...whatsappDriver.vars(),
};
const baton = sharedBaton({ vars: { ...driver.vars(), ...OTHERS } });
const SECRET = driver.credentials.secret;

/** What the fake Bot API holds of the bot's webhook, as `setWebhook` left it. */
interface WebhookState {
  url: string;
  secret: string;
  allowed: string[];
  lastError?: string;
}

/**
 * Telegram's webhook methods on the fake platform API, kept in `state`: `setWebhook` stores the
 * URL, secret and allowed updates, `getWebhookInfo` reports them (never the secret, as Telegram
 * does not), another bot token is 401 and any other method 404.
 */
function webhookApi(platform: FakePlatform, state: WebhookState): WebhookState {
  platform.respond((call) => {
    const method = call.path.split("?")[0].split("/").at(-1);
    if (!call.path.startsWith(`/bot${telegramBotToken}/`)) {
      return { status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } };
    }
    if (method === "setWebhook") {
      state.url = call.body.url;
      state.secret = call.body.secret_token ?? "";
      state.allowed = call.body.allowed_updates ?? [];
      return { status: 200, body: { ok: true, result: true, description: "Webhook was set" } };
    }
    if (method === "getWebhookInfo") {
      return {
        status: 200,
        body: {
          ok: true,
          result: {
            url: state.url,
            has_custom_certificate: false,
            pending_update_count: 0,
            allowed_updates: state.allowed,
            ...(state.lastError
              ? { last_error_date: 1_700_000_000, last_error_message: state.lastError }
              : {}),
          },
        },
      };
    }
    return { status: 404, body: { ok: false, error_code: 404, description: "Not Found" } };
  });
  return state;
}

/** The environment the CLI reads: the deployment's URL, the fake as the Bot API, the bot's secrets. */
function setupEnv(worker: TestWorker, platform: FakePlatform, secret = SECRET) {
  return {
    PUBLIC_URL: worker.url,
    TELEGRAM_API_ROOT: platform.url,
    TELEGRAM_BOT_TOKEN: telegramBotToken,
    TELEGRAM_WEBHOOK_SECRET: secret,
  };
}

/** Runs the CLI in process with `args` and `env`: its exit code and every line it printed. */
async function setup(args: string[], env: Record<string, string>) {
  const lines: string[] = [];
  const code = await runSetup(args, { env, print: (line) => lines.push(line) });
  const output = lines.join("\n");
  // No token (nor a bot token's secret half) and no webhook secret is ever printed.
  const secrets = [
    telegramBotToken,
    telegramBotToken.split(":")[1],
    SECRET,
    ...Object.values(OTHERS),
  ]
    .filter((v) => !/^\d+$/.test(v) && v !== "batonbot");
  for (const secret of secrets) {
    assert(!output.includes(secret), `the output holds a secret:\n${output}`);
  }
  return { code, output };
}

const hookOf = (worker: TestWorker) => new URL("/webhooks/telegram", worker.url).href;

baton.test(
  "runSetup() telegram sets the webhook here with the secret and baton's updates, then confirms it",
  async (worker, _fake, platform) => {
    const state = webhookApi(platform, { url: "", secret: "", allowed: [] });
    const { code, output } = await setup(["telegram"], setupEnv(worker, platform));
    assertEquals(code, 0, output);
    assertEquals(state, {
      url: hookOf(worker),
      secret: SECRET,
      allowed: ["message", "callback_query"],
    });
    assertEquals(
      platform.calls.map((c) => c.path.split("/").at(-1)),
      ["setWebhook", "getWebhookInfo"],
    );
    assertMatch(output, new RegExp(`Telegram delivers to ${hookOf(worker)}`));
  },
);

baton.test(
  "runSetup() telegram --check passes end to end without a model turn",
  async (worker, fake, platform) => {
    webhookApi(platform, {
      url: hookOf(worker),
      secret: SECRET,
      allowed: ["message", "callback_query"],
    });
    const { code, output } = await setup(["telegram", "--check"], setupEnv(worker, platform));
    assertEquals(code, 0, output);
    assertMatch(output, /test delivery was accepted/);
    // Only the webhook was read: no reply, no model call.
    assertEquals(platform.calls.map((c) => c.path.split("/").at(-1)), ["getWebhookInfo"]);
    assertEquals(fake.requests.length, 0);
  },
);

baton.test(
  "runSetup() telegram --check with a wrong secret says the deployment refused it and fails",
  async (worker, fake, platform) => {
    webhookApi(platform, { url: hookOf(worker), secret: "another", allowed: ["message"] });
    const { code, output } = await setup(
      ["telegram", "--check"],
      setupEnv(worker, platform, "not-the-deployed-secret"),
    );
    assertEquals(code, 1, output);
    assertMatch(
      output,
      /the deployment refused the secret: TELEGRAM_WEBHOOK_SECRET here differs from the deployment's/,
    );
    assert(!output.includes("not-the-deployed-secret"), output);
    assertEquals(fake.requests.length, 0);
  },
);

baton.test(
  "runSetup() telegram --check reports a webhook that points elsewhere, and Telegram's last error",
  async (worker, fake, platform) => {
    webhookApi(platform, {
      url: "https://elsewhere.example/webhooks/telegram",
      secret: SECRET,
      allowed: ["message"],
      lastError: "Wrong response from the webhook: 401 Unauthorized",
    });
    const { code, output } = await setup(["telegram", "--check"], setupEnv(worker, platform));
    assertEquals(code, 1, output);
    assertMatch(output, /Telegram delivers to https:\/\/elsewhere\.example\/webhooks\/telegram/);
    assertMatch(output, /Wrong response from the webhook: 401 Unauthorized/);
    assertEquals(fake.requests.length, 0);
  },
);

baton.test(
  "setup.ts (the CLI) reads .dev.vars under the environment and exits non-zero on a failed check",
  async (worker, _fake, platform) => {
    webhookApi(platform, { url: hookOf(worker), secret: SECRET, allowed: ["message"] });
    const dir = await Deno.makeTempDir();
    try {
      // The file's secret is wrong; the environment's URL and roots are taken over the file's.
      await Deno.writeTextFile(
        `${dir}/.dev.vars`,
        `# local settings\nTELEGRAM_WEBHOOK_SECRET="wrong-secret-from-file"\nPUBLIC_URL=https://stale.example\n`,
      );
      const { TELEGRAM_WEBHOOK_SECRET: _, ...env } = setupEnv(worker, platform);
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("../scripts/setup.ts", import.meta.url).pathname,
          "telegram",
          "--check",
        ],
        cwd: dir,
        env,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assertEquals(out.code, 1, output);
      assertMatch(output, /the deployment refused the secret/);
      assert(!output.includes("wrong-secret-from-file") && !output.includes(SECRET), output);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

baton.test(
  "runSetup() line sets the endpoint and has LINE test it; --check signs a delivery the deployment accepts",
  async (worker, fake, platform) => {
    const hook = new URL("/webhooks/line", worker.url).href;
    let endpoint = "";
    platform.respond(async (call) => {
      const path = call.path.split("?")[0];
      if (
        call.headers.get("authorization") !==
          `Bearer ${lineDriver.vars().LINE_CHANNEL_ACCESS_TOKEN}`
      ) {
        return { status: 401, body: { message: "Authentication failed" } };
      }
      if (path === "/v2/bot/channel/webhook/endpoint" && call.method === "PUT") {
        endpoint = call.body.endpoint;
        return { status: 200, body: {} };
      }
      if (path === "/v2/bot/channel/webhook/endpoint") {
        return { status: 200, body: { endpoint, active: true } };
      }
      if (path === "/v2/bot/channel/webhook/test") {
        // As LINE does: an empty, signed delivery to the endpoint, its outcome reported.
        const body = JSON.stringify({ destination: "Ufake", events: [] });
        const res = await fetch(call.body.endpoint, {
          method: "POST",
          headers: await lineDriver.sign(body, lineDriver.credentials),
          body,
        });
        await res.body?.cancel();
        return {
          status: 200,
          body: res.ok
            ? {
              success: true,
              timestamp: "2026-11-26T00:00:00Z",
              statusCode: res.status,
              reason: "OK",
              detail: "",
            }
            : { success: false, statusCode: res.status, reason: "ERROR_STATUS_CODE", detail: "" },
        };
      }
      return { status: 404, body: { message: "Not found" } };
    });
    const env = { PUBLIC_URL: worker.url, LINE_API_ROOT: platform.url, ...lineDriver.vars() };
    const set = await setup(["line"], env);
    assertEquals(set.code, 0, set.output);
    assertEquals(endpoint, hook);
    assertMatch(set.output, /LINE's test delivery was answered 200/);
    const check = await setup(["line", "--check"], env);
    assertEquals(check.code, 0, check.output);
    assertMatch(check.output, /a signed test delivery was accepted/);
    const wrong = await setup(["line", "--check"], {
      ...env,
      LINE_CHANNEL_SECRET: "not-the-secret-0000",
    });
    assertEquals(wrong.code, 1, wrong.output);
    assertMatch(
      wrong.output,
      /the deployment refused the secret: LINE_CHANNEL_SECRET here differs/,
    );
    assertEquals(fake.requests.length, 0);
  },
);

baton.test(
  "runSetup() slack, github and whatsapp --check sign deliveries the deployment acknowledges without a turn",
  async (worker, fake, _platform) => {
    const env = { PUBLIC_URL: worker.url, ...OTHERS };
    for (const platform of ["slack", "github", "whatsapp"]) {
      const { code, output } = await setup([platform, "--check"], env);
      assertEquals(code, 0, `${platform}: ${output}`);
      assertMatch(output, /a signed test delivery was accepted/);
    }
    const wrong = await setup(["slack", "--check"], {
      ...env,
      SLACK_SIGNING_SECRET: "0".repeat(32),
    });
    assertEquals(wrong.code, 1, wrong.output);
    assertMatch(wrong.output, /SLACK_SIGNING_SECRET here differs from the deployment's/);
    const handshake = await setup(["whatsapp", "--check"], {
      ...env,
      WHATSAPP_VERIFY_TOKEN: "other-token",
    });
    assertEquals(handshake.code, 1, handshake.output);
    assertMatch(handshake.output, /WHATSAPP_VERIFY_TOKEN here differs/);
    assertEquals(fake.requests.length, 0);
  },
);

baton.test("runSetup() discord prints the steps with this deployment's URL; --check names a disabled route's missing settings", async (worker) => {
  const steps = await setup(["discord"], { PUBLIC_URL: worker.url });
  assertEquals(steps.code, 0, steps.output);
  assertMatch(
    steps.output,
    new RegExp(`Interactions Endpoint URL: ${new URL("/webhooks/discord", worker.url).href}`),
  );
  const check = await setup(["discord", "--check"], { PUBLIC_URL: worker.url });
  assertEquals(check.code, 1, check.output);
  assertMatch(
    check.output,
    /answered an unsigned delivery 403: the discord webhook is disabled: set DISCORD_PUBLIC_KEY/,
  );
});

baton.test("runSetup() refuses an unknown platform or a missing URL with usage (exit 2)", async () => {
  assertEquals((await setup(["myspace"], { PUBLIC_URL: "https://bot.example.com" })).code, 2);
  const noUrl = await setup(["telegram"], {});
  assertEquals(noUrl.code, 2);
  assertMatch(noUrl.output, /no deployment URL: pass --url/);
});

baton.done();
