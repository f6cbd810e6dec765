// `npm start`: runs baton locally under `wrangler dev` on 127.0.0.1:8787, offline; Node.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const HOST = "127.0.0.1";
const PORT = "8787";
const LOCAL_KEY = "baton-local-key";
const LOCAL_WEBHOOK_SECRET = "whsec_YmF0b24tbG9jYWwtd2ViaG9vay1zZWNyZXQ=";

const args = ["dev", "--ip", HOST, "--port", PORT];
const hasDevVars = existsSync(join(root, ".dev.vars"));
if (!hasDevVars) {
  // No .dev.vars: a local key and secret so the echo model (no LLM_BASE_URL) answers at once.
  args.push(
    "--var",
    `GATEWAY_API_KEY:${LOCAL_KEY}`,
    "--var",
    `WEBHOOK_SECRET:${LOCAL_WEBHOOK_SECRET}`,
  );
}

console.log(
  `baton: http://${HOST}:${PORT} (the web console: open it in a browser) ` +
    (hasDevVars
      ? "(settings from .dev.vars)"
      : `(API key: ${LOCAL_KEY}; generic webhook secret: ${LOCAL_WEBHOOK_SECRET})`),
);

const wrangler = join(root, "node_modules", ".bin", "wrangler");
const env = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

// The session directory's tables in the local D1 (.wrangler/state, where wrangler dev keeps it);
// applied migrations are recorded there, so a second start applies nothing. Offline, no prompt.
const migrated = spawnSync(wrangler, ["d1", "migrations", "apply", "DIRECTORY", "--local"], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
  encoding: "utf8",
  env,
});
if (migrated.status !== 0) {
  process.stderr.write(migrated.stdout + migrated.stderr);
  console.error("baton: the session directory's migrations failed; GET /v1/sessions will not work");
}

// The .bin launcher, not npx: it forwards signals, so stopping it stops esbuild and workerd too.
const child = spawn(wrangler, args, { cwd: root, stdio: "inherit", env });

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}

child.on("error", (error) => {
  console.error(`baton: cannot start wrangler: ${error.message}`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  // A child ended by a signal exits 128 + signal number, like a shell would report it.
  process.exit(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 1));
});
