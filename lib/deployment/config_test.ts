// Unit tests of readConfig: defaults, ranges and fallbacks of every parsed setting; runs under Deno.
import { assertEquals } from "@std/assert";
import { readConfig } from "./config.ts";

/** The parts of a config that are plain data (sets as sorted arrays), for comparing whole configs. */
function _plain(vars: object) {
  const config = readConfig(vars);
  const { access, approvalTools, contextDefaults: _c, mcp: _m, ...rest } = config;
  return {
    ...rest,
    approvalTools: [...approvalTools].sort(),
    access: {
      ...access,
      allowed: [...access.allowed].sort(),
      admins: [...access.admins].sort(),
      githubAssociations: [...access.githubAssociations].sort(),
    },
    mcpTimeouts: [config.mcp.timeoutMs, config.mcp.toolsTtlMs],
  };
}

/** Only the keys `expected` names: other helpers add config fields these tests do not pin. */
function _pick(actual: Record<string, unknown>, expected: Record<string, unknown>) {
  return Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]]));
}

Deno.test("readConfig() of an empty env gives every documented default", () => {
  const expected = {
    llmBaseUrl: "",
    llmApiKey: "",
    llmModel: "echo",
    llmMaxRetries: 3,
    llmTimeoutMs: 120_000,
    systemPrompt: "",
    maxTurnSteps: 8,
    historyWindow: 40,
    turnTimeoutMs: 600_000,
    turnLeaseMs: 30_000,
    busyMode: "queue",
    maxQueued: 32,
    busyAck: true,
    groupStop: "sender",
    apiKeys: [],
    adminTenants: ["default"],
    apiTurnsPerMinute: null,
    corsOrigins: [],
    approveRecurringJobs: true,
    approvalTimeoutMs: { chat: 86_400_000, api: 600_000 },
    keepAliveMs: 15_000,
    maxJobsPerSession: 20,
    streamReplies: true,
    maxSessionsPerTenant: null,
    maxJobsPerTenant: 200,
    maxStreamsPerTenant: null,
    logLevel: "info",
    approvalTools: [],
    access: {
      mode: "pairing",
      allowed: [],
      admins: [],
      githubAssociations: ["COLLABORATOR", "MEMBER", "OWNER"],
      githubRefusalComment: false,
      userTurnsPerHour: null,
      maxPendingPairings: 50,
    },
    mcpTimeouts: [30_000, 300_000],
  };
  assertEquals(_pick(_plain({}), expected), expected);
});

Deno.test("readConfig() takes valid values and falls back on out-of-range or malformed ones", () => {
  const set = _plain({
    LLM_BASE_URL: "https://llm.example/v1",
    LLM_MAX_RETRIES: "10",
    LLM_TIMEOUT_MS: "999",
    MAX_TURN_STEPS: "64",
    HISTORY_WINDOW: "2.5",
    TURN_TIMEOUT_MS: "840000",
    TURN_LEASE_MS: "100",
    BUSY_INPUT_MODE: "merge",
    MAX_QUEUED: "abc",
    BUSY_ACK: "OFF",
    GROUP_STOP: "Anyone",
    ADMIN_API_KEYS: " ops , ,root ",
    API_TURNS_PER_MINUTE: "0",
    CORS_ORIGINS: "https://a.example/, https://b.example//",
    APPROVAL_TOOLS: "fetch_url,  shell",
    APPROVE_RECURRING_JOBS: "off",
    APPROVAL_TIMEOUT_MS: "5000",
    KEEPALIVE_MS: "60001",
    MAX_JOBS_PER_SESSION: "1000",
    STREAM_REPLIES: "Off",
    MAX_SESSIONS_PER_TENANT: "7",
    MAX_JOBS_PER_TENANT: "OFF",
    MAX_STREAMS_PER_TENANT: "1000001",
    MCP_TIMEOUT_MS: "99",
    MCP_TOOLS_TTL_MS: "86400000",
    LOG_LEVEL: "DEBUG",
    ACCESS_POLICY: " Open ",
    USER_TURNS_PER_HOUR: "30",
    MAX_PENDING_PAIRINGS: "10001",
    GITHUB_REFUSAL: "comment",
  });
  assertEquals(
    [set.llmModel, set.llmMaxRetries, set.llmTimeoutMs, set.maxTurnSteps, set.historyWindow],
    ["gpt-4o-mini", 10, 120_000, 64, 40],
  );
  assertEquals([set.turnTimeoutMs, set.turnLeaseMs, set.busyMode, set.maxQueued, set.busyAck], [
    840_000,
    100,
    "merge",
    32,
    false,
  ]);
  assertEquals([set.groupStop, set.adminTenants, set.apiTurnsPerMinute, set.corsOrigins], [
    "anyone",
    ["ops", "root"],
    null,
    ["https://a.example", "https://b.example"],
  ]);
  assertEquals([set.approvalTools, set.approveRecurringJobs, set.approvalTimeoutMs], [
    ["fetch_url", "shell"],
    false,
    { chat: 5000, api: 5000 },
  ]);
  assertEquals(
    [set.keepAliveMs, set.maxJobsPerSession, set.streamReplies, set.maxSessionsPerTenant],
    [15_000, 1000, false, 7],
  );
  assertEquals([set.maxJobsPerTenant, set.maxStreamsPerTenant, set.mcpTimeouts, set.logLevel], [
    null,
    null,
    [30_000, 86_400_000],
    "debug",
  ]);
  assertEquals(
    [set.access.mode, set.access.userTurnsPerHour, set.access.maxPendingPairings],
    ["open", 30, 50],
  );
  assertEquals(set.access.githubRefusalComment, true);
});

Deno.test("readConfig() keeps a cap of 0 off and an unknown switch value on", () => {
  const config = readConfig({ MAX_JOBS_PER_TENANT: "0", BUSY_ACK: "no", STREAM_REPLIES: "false" });
  assertEquals([config.maxJobsPerTenant, config.busyAck, config.streamReplies], [null, true, true]);
  assertEquals(readConfig({ MAX_JOBS_PER_TENANT: "x" }).maxJobsPerTenant, 200);
  assertEquals(readConfig({ LLM_MODEL: "m1" }).llmModel, "m1");
});

Deno.test("readConfig() access: pairing, GitHub members and collaborators, no quota by default; a bad policy is pairing", () => {
  const access = readConfig({}).access;
  assertEquals(access.mode, "pairing");
  assertEquals([...access.githubAssociations], ["OWNER", "MEMBER", "COLLABORATOR"]);
  assertEquals(access.userTurnsPerHour, null);
  assertEquals(access.githubRefusalComment, false);
  assertEquals(access.maxPendingPairings, 50);
  assertEquals(readConfig({ ACCESS_POLICY: "bogus" }).access.mode, "pairing");
  assertEquals(readConfig({ ACCESS_POLICY: " Open " }).access.mode, "open");
  assertEquals(readConfig({ USER_TURNS_PER_HOUR: "0" }).access.userTurnsPerHour, null);
  assertEquals(readConfig({ USER_TURNS_PER_HOUR: "12" }).access.userTurnsPerHour, 12);
  assertEquals(readConfig({ GITHUB_REFUSAL: "Comment" }).access.githubRefusalComment, true);
  const lists = readConfig({
    ALLOWED_USERS: " telegram:1, github:OctoCat ,bad",
    ADMIN_USERS: "discord:9",
    GITHUB_ALLOWED_ASSOCIATIONS: "owner",
  }).access;
  assertEquals([...lists.allowed].sort(), ["discord:9", "github:octocat", "telegram:1"]);
  assertEquals([...lists.githubAssociations], ["OWNER"]);
});
