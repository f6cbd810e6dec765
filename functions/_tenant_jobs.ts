// A session object's line to its API tenant's job count (MAX_JOBS_PER_TENANT): admissions and reports to the tenant's access object, the last count it acknowledged kept in the session; Workers.
import { type KeyStorage, tenantOfSessionKey } from "../lib/api/mod.ts";
import type { TenantJobCount } from "../lib/session/mod.ts";
import { accessStub } from "./access_client.ts";
import type { Env } from "./env.ts";

/** The session's mark: how many live jobs its tenant last acknowledged for it (absent: none). */
const _REPORTED = "tenant_jobs";

/**
 * The tenant job count of session `key` (see `TenantJobCount`), or undefined when the session
 * is no API tenant's or `limit` is null (`MAX_JOBS_PER_TENANT=off`): then nothing asks anyone.
 * A report whose count the tenant already has (the mark says so) costs no call, so only a job
 * created, ended or removed does I/O, never an ordinary turn.
 */
export function tenantJobCount(
  env: Env,
  kv: KeyStorage,
  key: string,
  limit: number | null,
): TenantJobCount | undefined {
  const tenant = tenantOfSessionKey(key);
  if (limit === null || tenant === null) return undefined;
  const stub = () => accessStub(env, `tenant:${tenant}`);
  return {
    async admit(live) {
      const answer = await stub().admitJob(key, live, limit);
      if (!answer.admitted) {
        return `this API key's tenant has MAX_JOBS_PER_TENANT (${limit}) jobs not done yet across ` +
          "its sessions; delete one (DELETE /v1/jobs/{id}) or wait for a one-off to run";
      }
      kv.put(_REPORTED, live + 1);
      return null;
    },
    async report(live) {
      if ((kv.get<number>(_REPORTED) ?? 0) === live) return;
      await stub().reportJobs(key, live);
      kv.put(_REPORTED, live);
    },
  };
}
