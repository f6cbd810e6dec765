// Shared fast-check generators of fuzz_test.ts: headers, bodies around a valid payload, signature specs; Deno.
import fc from "fast-check";

/** The body size limit baton enforces (413 above it). */
export const MAX_BODY = 1024 * 1024;
/** Unix seconds when the fuzzer started (fixed payload dates, near-miss timestamps). */
export const NOW = Math.floor(Date.now() / 1000);

const encoder = new TextEncoder();

/**
 * Stands in every generated text field; rendering puts the case's "FUZZ-<n>." marker in its
 * place, so a turn can be traced back to its request.
 */
export const MARK = "@@MARK@@";

/** A string of n "x" after the marker, materialised only when the body is serialised. */
class _Huge {
  constructor(readonly n: number) {}
  toJSON(): string {
    return MARK + "x".repeat(this.n);
  }
}
/**
 * A value nested `n` levels deep (arrays or objects around the marker), materialised only when
 * the body is serialised: the nesting dimension (a session once stored ~1,000 levels it could not
 * read back, and was broken for good).
 */
class _Deep {
  constructor(readonly n: number, readonly objects: boolean) {}
  toJSON(): unknown {
    let v: unknown = MARK;
    for (let i = 0; i < this.n; i++) v = this.objects ? { a: v } : [v];
    return v;
  }
}
/** Removes the field it replaces. */
class _Drop {
  toJSON(): undefined {
    return undefined;
  }
}

/** Latin-1 strings (tabs and, rarely, control characters too) up to `maxLength`. */
export const latin1 = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof(
      { weight: 140, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
      { weight: 50, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
      { weight: 8, arbitrary: fc.constant(0x09) },
      // Headers cannot carry these: such a case is skipped as unsendable.
      { weight: 2, arbitrary: fc.constantFrom(0x00, 0x0a, 0x0d, 0x1f, 0x7f) },
    ).map((c) => String.fromCharCode(c)),
    maxLength,
  });
/** Latin-1 mostly, sometimes wider Unicode (which Headers refuses: the case is skipped). */
export const headerValue = fc.oneof(
  { weight: 12, arbitrary: latin1() },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
);
/** Lower-case header names (sometimes a real one: a duplicate header is a case too). */
const _headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
/** Up to three extra headers of random names and values. */
export const extraHeaders = fc.array(fc.tuple(_headerName, headerValue), { maxLength: 3 });
/** A Content-Type header value: JSON mostly, sometimes another type or junk. */
export const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "text/plain",
      "application/x-www-form-urlencoded",
      "application/json; charset=utf-8",
      "",
      "multipart/form-data; boundary=x",
    ),
  },
  { weight: 1, arbitrary: headerValue },
);

/**
 * A value of the wrong type for any field, an over-long string, a removal; now and then a value
 * nested deeper than any limit (the nesting dimension).
 */
const _wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 10, arbitrary: fc.constant(null) },
  { weight: 10, arbitrary: fc.integer() },
  { weight: 10, arbitrary: fc.double() },
  { weight: 10, arbitrary: fc.boolean() },
  { weight: 10, arbitrary: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }) },
  { weight: 10, arbitrary: fc.object({ maxDepth: 1, maxKeys: 3 }) },
  { weight: 10, arbitrary: fc.integer({ min: 4097, max: 120_000 }).map((n) => new _Huge(n)) },
  { weight: 10, arbitrary: latin1(20) },
  { weight: 10, arbitrary: fc.constant(new _Drop()) },
  {
    weight: 4,
    arbitrary: fc.tuple(fc.integer({ min: 16, max: 1_500 }), fc.boolean())
      .map(([n, objects]) => new _Deep(n, objects)),
  },
);

/** Where a value sits in a JSON tree. */
type _Path = (string | number)[];

/** A stand-in materialised at serialisation: copied and walked as a leaf. */
function _opaque(v: object): boolean {
  return v instanceof _Huge || v instanceof _Drop || v instanceof _Deep;
}

/** A deep copy, so mutations never touch a value fast-check may reuse. */
function _clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(_clone);
  if (v && typeof v === "object" && !_opaque(v)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, _clone(x)]));
  }
  return v;
}

/** Every path in a JSON tree, the root included. */
function _paths(v: unknown, prefix: _Path = []): _Path[] {
  const out: _Path[] = [prefix];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(..._paths(x, [...prefix, i])));
  else if (v && typeof v === "object" && !_opaque(v)) {
    for (const [k, x] of Object.entries(v)) out.push(..._paths(x, [...prefix, k]));
  }
  return out;
}

/** Puts `value` at `path` (removes it for a _Drop); returns the new root. */
function _setAt(root: unknown, path: _Path, value: unknown): unknown {
  if (path.length === 0) return value;
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (value instanceof _Drop) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
  return root;
}

/** A valid payload with one or two fields replaced by a value of the wrong type (or removed). */
function _mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(
    base,
    fc.array(fc.tuple(fc.nat(), _wrongValue), { minLength: 1, maxLength: 2 }),
  ).map(([value, muts]) => {
    let v = _clone(value);
    for (const [pick, wrong] of muts) {
      const all = _paths(v);
      // A copy: fast-check reuses values while shrinking, and setting the same object inside
      // itself made a cycle (and a stack overflow in _paths) instead of a counterexample.
      v = _setAt(v, all[pick % all.length], _clone(wrong));
    }
    return v;
  });
}

/** A request body to render: a JSON value, a cut-off one, raw bytes or text, nothing, or over 1 MiB. */
export type BodySpec =
  | { kind: "json"; value: unknown }
  | { kind: "truncated"; value: unknown; cut: number }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "raw"; text: string }
  | { kind: "empty" }
  | { kind: "oversized"; n: number; json: boolean }
  /** A valid payload whose marked text is padded until the body is `bytes` long (under the cap). */
  | { kind: "large"; value: unknown; bytes: number };

/**
 * Bodies around a valid payload: valid, mistyped, truncated, random bytes/JSON, empty, >1 MiB (1 in
 * 200); with `large`, also valid payloads padded to between 512 KiB and the cap (the size
 * dimension, 3 in 200: whatever the cap admits must run or be refused up front — a turn once
 * failed late with a 502 when its row outgrew SQLite's). Only routes whose reply is the HTTP
 * answer take `large`: a platform's echo of 1 MiB would be hundreds of parts.
 */
export function bodyArb(
  base: fc.Arbitrary<unknown>,
  raws: string[] = [],
  opts: { large?: boolean } = {},
): fc.Arbitrary<BodySpec> {
  return fc.oneof(
    {
      weight: opts.large ? 3 : 0,
      arbitrary: fc.tuple(base, fc.integer({ min: 512 * 1024, max: MAX_BODY - 1024 }))
        .map(([value, bytes]): BodySpec => ({ kind: "large", value, bytes })),
    },
    { weight: 6, arbitrary: base.map((value): BodySpec => ({ kind: "json", value })) },
    { weight: 115, arbitrary: _mutated(base).map((value): BodySpec => ({ kind: "json", value })) },
    {
      weight: 30,
      arbitrary: fc.tuple(base, fc.nat()).map(([value, cut]): BodySpec => ({
        kind: "truncated",
        value,
        cut,
      })),
    },
    {
      weight: 24,
      arbitrary: fc.uint8Array({ maxLength: 512 }).map((bytes): BodySpec => ({
        kind: "bytes",
        bytes,
      })),
    },
    {
      weight: 16,
      arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): BodySpec => ({ kind: "json", value })),
    },
    { weight: 4, arbitrary: fc.constant<BodySpec>({ kind: "empty" }) },
    {
      weight: raws.length ? 4 : 0,
      arbitrary: fc.constantFrom(...(raws.length ? raws : [""])).map((text): BodySpec => ({
        kind: "raw",
        text,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: MAX_BODY + 1, max: MAX_BODY + 65_536 }), fc.boolean())
        .map(([n, json]): BodySpec => ({ kind: "oversized", n, json })),
    },
  );
}

/** The bytes of a body spec, with every MARK replaced by `marker`. */
export function renderBody(spec: BodySpec, marker: string): Uint8Array {
  const withMark = (s: string) => s.replaceAll(MARK, marker);
  switch (spec.kind) {
    case "json":
      return encoder.encode(withMark(JSON.stringify(spec.value) ?? ""));
    case "truncated": {
      const s = withMark(JSON.stringify(spec.value) ?? "");
      return encoder.encode(s.slice(0, s.length ? spec.cut % s.length : 0));
    }
    case "bytes":
      return spec.bytes;
    case "raw":
      return encoder.encode(withMark(spec.text));
    case "empty":
      return new Uint8Array();
    case "large": {
      // The padding goes right after the first marker, inside its JSON string.
      const s = JSON.stringify(spec.value) ?? "";
      const at = s.indexOf(MARK);
      const body = withMark(s);
      if (at < 0) return encoder.encode(body);
      const pad = Math.max(0, spec.bytes - encoder.encode(body).length);
      return encoder.encode(
        withMark(s.slice(0, at + MARK.length) + "x".repeat(pad) + s.slice(at + MARK.length)),
      );
    }
    case "oversized": {
      if (!spec.json) return new Uint8Array(spec.n).fill(0x7b);
      const head = `{"session":"fz","text":"${marker}`;
      return encoder.encode(head + "x".repeat(spec.n - head.length - 2) + '"}');
    }
  }
}

/** How to sign a webhook case: validly, or one of the ways to get it wrong. */
export type SigSpec =
  | { k: "valid" }
  | { k: "missing" }
  | { k: "truncated"; cut: number }
  | { k: "prefix"; prefix: string }
  | { k: "otherBody"; extra: string }
  | { k: "stale"; offset: number }
  | { k: "badTs"; ts: string }
  | { k: "multi"; count: number; validAt: number }
  | { k: "random"; value: string }
  | { k: "upper" }
  | { k: "wrongKey" };

/** Signature specs: valid in about half the cases, else one of the wrong kinds. */
export const sigArb: fc.Arbitrary<SigSpec> = fc.oneof(
  { weight: 20, arbitrary: fc.constant<SigSpec>({ k: "valid" }) },
  { weight: 2, arbitrary: fc.constant<SigSpec>({ k: "missing" }) },
  { weight: 2, arbitrary: fc.nat().map((cut): SigSpec => ({ k: "truncated", cut })) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "",
      "v0,",
      "v0=",
      "v1=",
      "v1,",
      "v2,",
      "sha1=",
      "SHA256=",
      "V1,",
      " ",
    )
      .map((prefix): SigSpec => ({ k: "prefix", prefix })),
  },
  {
    weight: 2,
    arbitrary: fc.string({ minLength: 1, maxLength: 4 }).map((extra): SigSpec => ({
      k: "otherBody",
      extra,
    })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 301, max: 1_000_000_000 }), fc.boolean()).map((
      [n, past],
    ): SigSpec => ({ k: "stale", offset: past ? -n : n })),
  },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom("", "abc", "-1", "1e9", ` ${NOW}`, `${NOW}.5`, "0x10", "9".repeat(25)),
      latin1(12),
    ).map((ts): SigSpec => ({ k: "badTs", ts })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.integer({ min: 2, max: 4 }), fc.integer({ min: -1, max: 3 })).map((
      [count, validAt],
    ): SigSpec => ({ k: "multi", count, validAt })),
  },
  { weight: 2, arbitrary: headerValue.map((value): SigSpec => ({ k: "random", value })) },
  { weight: 1, arbitrary: fc.constant<SigSpec>({ k: "upper" }) },
  { weight: 1, arbitrary: fc.constant<SigSpec>({ k: "wrongKey" }) },
);

/** One request ready to send. */
export interface Built {
  method: string;
  path: string;
  headers: [string, string][];
  body?: Uint8Array;
  /** A text/event-stream answer is allowed (a valid streaming request). */
  sseAllowed?: boolean;
  /** A 2xx answer may have this content type instead of JSON, body unchecked (Twilio's TwiML). */
  textAnswer?: string;
}

/** One fuzzed route: how its cases are generated and turned into requests. */
export interface RouteFuzz<C> {
  name: string;
  arb: fc.Arbitrary<C>;
  /** The request of case `c`, whose text fields carry `marker`; null when it cannot be built. */
  build(c: C, marker: string): Promise<Built | null>;
  /** Called with each answered case (e.g. to collect run ids). */
  seen?(res: Response, text: string): void;
}

const _b64url = (s: string) => btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

/**
 * Ids of the form `<prefix>_<base64url session>_<seq>` (run and response ids): real ones (an
 * index into those seen), well-formed unknown ones, junk, and near misses of the form.
 */
export function sessionSeqIdArb(
  prefix: string,
): fc.Arbitrary<{ real: number } | { id: string }> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.nat().map((i) => ({ real: i })) },
    {
      weight: 6,
      arbitrary: fc.tuple(
        fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,30}$/), latin1(20)),
        fc.oneof(
          fc.integer({ min: 1, max: 1000 }).map(String),
          fc.constantFrom("0", "01", "-1", "1.5", "9".repeat(17), "99999999999999999999", ""),
        ),
      ).map(([session, seq]) => ({ id: `${prefix}_${_b64url(session)}_${seq}` })),
    },
    { weight: 3, arbitrary: latin1(60).map((id) => ({ id })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `${prefix}_`,
        `${prefix}__1`,
        `${prefix}_%%%_1`,
        `${prefix}_${"A".repeat(200)}_1`,
        `${prefix}_AAAA_1`,
        `${prefix}_=_1`,
        prefix === "run" ? "resp_ZnpfMQ_1" : "run_ZnpfMQ_1",
      ).map((id) => ({ id })),
    },
  );
}

/** A route whose case type is inferred from its arbitrary. */
export function route<C>(
  name: string,
  arb: fc.Arbitrary<C>,
  build: (c: C, marker: string) => Built,
  seen?: (res: Response, text: string) => void,
): RouteFuzz<C> {
  return { name, arb, build: (c, marker) => Promise.resolve(build(c, marker)), seen };
}

/** The authorization header of a case, none when its spec is null. */
export function authHeader(auth: string | null): [string, string][] {
  return auth === null ? [] : [["authorization", auth]];
}

/** Whether a rendered JSON body asks for a stream (so an SSE answer is allowed). */
export function asksForStream(body: Uint8Array): boolean {
  try {
    return JSON.parse(new TextDecoder().decode(body))?.stream === true;
  } catch {
    return false;
  }
}
