// MCP_SERVERS: the remote MCP servers whose tools the agent may call, parsed and with their secrets resolved; runtime-neutral.
import * as z from "zod";

/** One remote MCP server (Streamable HTTP) as configured, header secrets resolved. */
export interface McpServerConfig {
  /** Prefix of its tools' names (`<name>__<tool>`): 1-32 of `[A-Za-z0-9-]`, no `__`. */
  name: string;
  url: string;
  /** Sent with every request; values may contain secrets (never logged). */
  headers: Record<string, string>;
  /** Which of its tools ask the user first: all (`true`), or these tool names (the server's own). */
  approval: true | ReadonlySet<string> | null;
  /** Only these tools (the server's names) are offered; null: all. */
  tools: ReadonlySet<string> | null;
}

/** The MCP settings: servers, and what a call or a listing may cost. */
export interface McpConfig {
  servers: McpServerConfig[];
  /** A call's (and a listing's) time limit (`MCP_TIMEOUT_MS`, default 30 s). */
  timeoutMs: number;
  /** How long a server's tool list is used before it is listed again (`MCP_TOOLS_TTL_MS`, default 5 min). */
  toolsTtlMs: number;
  /**
   * What was wrong with `MCP_SERVERS`, one line each, naming servers, fields and variables but
   * never a header's value: logged once by the session object that builds the tools.
   */
  problems: string[];
}

/** One `MCP_SERVERS` entry, built on its first parse (`z.lazy`): a Worker without MCP builds none. */
const _server = z.lazy(() =>
  z.object({
    // One `_` at most in a row: `__` separates the server from the tool in a tool's name.
    name: z.string().regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/).max(32),
    url: z.string().url().refine((u) => /^https?:\/\//i.test(u), "http(s) URL"),
    headers: z.record(z.string(), z.string()).optional(),
    approval: z.union([z.boolean(), z.array(z.string())]).optional(),
    tools: z.array(z.string()).optional(),
  })
);

/**
 * Parses `MCP_SERVERS` (a JSON list of `{name, url, headers?, approval?, tools?}`) and resolves
 * each `${NAME}` in a header value from `env` (the Worker's secrets and vars). A malformed entry,
 * a repeated name or a header naming an unset variable drops that server, and says so in
 * `problems`; unset or empty: no servers.
 */
export function parseMcpServers(
  raw: unknown,
  env: Record<string, unknown>,
): { servers: McpServerConfig[]; problems: string[] } {
  if (typeof raw !== "string" || !raw.trim()) return { servers: [], problems: [] };
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    return { servers: [], problems: ["MCP_SERVERS is not valid JSON"] };
  }
  if (!Array.isArray(list)) return { servers: [], problems: ["MCP_SERVERS is not a JSON list"] };
  const servers: McpServerConfig[] = [];
  const problems: string[] = [];
  list.forEach((entry, index) => {
    const parsed = _server.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      // The path names a field, never a header's value.
      problems.push(`MCP_SERVERS[${index}].${issue.path.join(".") || "entry"}: ${issue.message}`);
      return;
    }
    const { name, url, headers = {}, approval, tools } = parsed.data;
    if (servers.some((s) => s.name === name)) {
      problems.push(`MCP_SERVERS[${index}]: the name ${name} is used twice`);
      return;
    }
    const resolved = _resolveHeaders(headers, env);
    if (typeof resolved === "string") {
      problems.push(`MCP server ${name}: ${resolved}`);
      return;
    }
    servers.push({
      name,
      url,
      headers: resolved,
      approval: approval === true ? true : Array.isArray(approval) ? new Set(approval) : null,
      tools: tools ? new Set(tools) : null,
    });
  });
  return { servers, problems };
}

/** The headers with `${NAME}` replaced by env's NAME; a problem (naming the variable) when one is unset. */
function _resolveHeaders(
  headers: Record<string, string>,
  env: Record<string, unknown>,
): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const [header, value] of Object.entries(headers)) {
    let missing: string | null = null;
    out[header] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const secret = env[name];
      if (typeof secret === "string" && secret !== "") return secret;
      missing ??= name;
      return "";
    });
    if (missing !== null) return `header ${header} names \${${missing}}, which is not set`;
  }
  return out;
}
