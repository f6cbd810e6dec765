// The fuzzer's owner access routes (/v1/access/*): codes and users near valid, junk, encoded; Deno.
import fc from "fast-check";
import { apiAuthArb, encodePath, pathEncoding } from "./_fuzz_api.ts";
import { authHeader, extraHeaders, latin1, route, type RouteFuzz } from "./_fuzz_gen.ts";

/** Pairing codes: well-formed (mostly unknown), lower-case or dashed, near misses, junk. */
const _codeArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-HJKMNP-Z2-9]{8}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-hjkmnp-z2-9]{4}-[a-hjkmnp-z2-9]{4}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Z0-9]{0,12}$/) },
  { weight: 1, arbitrary: latin1(16) },
);

/** `platform:user` entries: plausible, Slack's with a slash, junk. */
const _userArb = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^(telegram|discord|github):[A-Za-z0-9-]{1,20}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^slack:T[A-Z0-9]{1,8}\/U[A-Z0-9]{1,8}$/) },
  { weight: 2, arbitrary: latin1(24) },
);

/** The owner's access API, behind the admin tenant's key. */
export const ACCESS_ROUTES: RouteFuzz<never>[] = [
  route(
    "GET /v1/access/{pairings,users}",
    fc.record({
      auth: apiAuthArb,
      list: fc.constantFrom("pairings", "users", "pairings/", "users?x=1"),
      extra: extraHeaders,
    }),
    (c) => ({
      method: "GET",
      path: `/v1/access/${c.list}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
  route(
    "POST /v1/access/pairings/{code}/approve",
    fc.record({ auth: apiAuthArb, code: _codeArb, how: pathEncoding, extra: extraHeaders }),
    (c) => ({
      method: "POST",
      path: `/v1/access/pairings/${encodePath(c.code, c.how)}/approve`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
  route(
    "DELETE /v1/access/users/{platform:user}",
    fc.record({ auth: apiAuthArb, user: _userArb, how: pathEncoding, extra: extraHeaders }),
    (c) => ({
      method: "DELETE",
      path: `/v1/access/users/${encodePath(c.user, c.how)}`,
      headers: [...authHeader(c.auth), ...c.extra],
    }),
  ),
] as unknown as RouteFuzz<never>[];
