// API tenants: which key names which tenant, and the session keys each tenant owns; runtime-neutral (Web Crypto).
import { constantTimeEquals } from "../runtime/mod.ts";

/** The tenant of `GATEWAY_API_KEY`, whose sessions keep the `api:` prefix of single-key deployments. */
export const DEFAULT_TENANT = "default";

const _NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** One API key and the tenant it names. */
export interface TenantKey {
  name: string;
  key: string;
}

/** Who an API request acts for. */
export interface ApiTenant {
  name: string;
  /** May use `/v1/access/*` and address platform sessions (`ADMIN_API_KEYS`). */
  admin: boolean;
}

/**
 * The deployment's API keys: `GATEWAY_API_KEY` as tenant `default`, then each `name:key` of
 * `GATEWAY_API_KEYS` (comma-separated). Entries without a valid name (1-32 of `[A-Za-z0-9_-]`) or
 * key are skipped, and so is a name seen before: one name, one key.
 */
export function parseTenantKeys(defaultKey: string, list: string): TenantKey[] {
  const keys: TenantKey[] = defaultKey ? [{ name: DEFAULT_TENANT, key: defaultKey }] : [];
  for (const entry of list.split(",")) {
    const colon = entry.indexOf(":");
    if (colon < 0) continue;
    const name = entry.slice(0, colon).trim();
    const key = entry.slice(colon + 1).trim();
    if (!_NAME.test(name) || !key || keys.some((k) => k.name === name)) continue;
    keys.push({ name, key });
  }
  return keys;
}

/**
 * The tenant whose key is `given`, or null. Every key is compared, each in constant time, so the
 * time taken says nothing about which key (or how much of one) matched.
 */
export async function tenantOfKey(
  keys: readonly TenantKey[],
  given: string,
): Promise<string | null> {
  const matches = await Promise.all(keys.map((k) => constantTimeEquals(given, k.key)));
  const index = matches.indexOf(true);
  return index < 0 ? null : keys[index].name;
}

/** The prefix of a tenant's session keys: `api:` for `default` (as before tenants), `api.<name>:` otherwise. */
export function tenantPrefix(tenant: string): string {
  return tenant === DEFAULT_TENANT ? "api:" : `api.${tenant}:`;
}

/** The session key of API session `id` (an `X-Session-Id`) of `tenant`. */
export function tenantSessionKey(tenant: string, id: string): string {
  return `${tenantPrefix(tenant)}${id}`;
}

/** Whether `tenant` may address session `key`: its own API sessions, or any session for an admin. */
export function mayAddressSession(tenant: ApiTenant, key: string): boolean {
  return tenant.admin || key.startsWith(tenantPrefix(tenant.name));
}

/**
 * The API tenant whose session `key` is (`api:` → `default`, `api.<name>:` → name), or null for
 * a platform session: the session directory's `tenant` column.
 */
export function tenantOfSessionKey(key: string): string | null {
  if (key.startsWith("api:")) return DEFAULT_TENANT;
  const match = /^api\.([A-Za-z0-9][A-Za-z0-9_-]{0,31}):/.exec(key);
  return match ? match[1] : null;
}
