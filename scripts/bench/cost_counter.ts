// Bench cost counter: wraps a bundled Worker (baton or the peer) so that it counts what Cloudflare bills per turn — DO requests, SQLite and D1 rows, subrequests, DO active time; Deno.
import { bundleWorker } from "./worker.ts";

// Runs first (imported before the Worker's bundle): replaces the global fetch before any module
// can keep a reference to it. Everything is counted in module globals, which the Worker and its
// Durable Objects share in local workerd (one isolate per service); `GET /__bench/cost` on the
// Worker answers them, `?reset=1` also clears them.
const _PRELUDE = `
import { AsyncLocalStorage } from "node:async_hooks";
const C = globalThis.__benchCost = {
  workerRequests: 0, doRequests: {}, sql: {}, d1: { read: 0, written: 0, unmetered: 0, statements: 0 },
  subrequests: {}, modelWaitMs: 0, doActiveMs: 0, instances: {}, pending: [],
};
// Which object the running code belongs to: set on every entry into a Durable Object.
export const objectContext = new AsyncLocalStorage();
const busy = new Map();
// Reference-counted busy time per object: the object is active while any entry is unfinished.
export function enter(id) {
  const b = busy.get(id) ?? { n: 0, since: 0 };
  if (b.n++ === 0) b.since = Date.now();
  busy.set(id, b);
}
export function leave(id) {
  const b = busy.get(id);
  if (b && --b.n === 0) { C.doActiveMs += Date.now() - b.since; busy.delete(id); }
}
// A pending timer keeps an object from hibernating (billed), so it counts as busy until it runs.
const realSetTimeout = globalThis.setTimeout, realClearTimeout = globalThis.clearTimeout;
const timers = new Map();
globalThis.setTimeout = function (fn, ms, ...args) {
  const id = objectContext.getStore();
  if (!id || typeof fn !== "function") return realSetTimeout(fn, ms, ...args);
  enter(id);
  let done = false;
  const finish = () => { if (!done) { done = true; timers.delete(handle); leave(id); } };
  const handle = realSetTimeout((...a) => { try { return fn(...a); } finally { finish(); } }, ms, ...args);
  timers.set(handle, finish);
  return handle;
};
globalThis.clearTimeout = function (handle) {
  timers.get(handle)?.();
  return realClearTimeout(handle);
};
/** Objects with unfinished work now. */
export const busyObjects = () => busy.size;
const kindOf = (url) => url.pathname.endsWith("/chat/completions") ? "model"
  : /^\\/bot[^/]+\\//.test(url.pathname) ? "platform" : url.host;
const realFetch = globalThis.fetch;
globalThis.fetch = async function (input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const kind = kindOf(url);
  C.subrequests[kind] = (C.subrequests[kind] ?? 0) + 1;
  const id = objectContext.getStore();
  const t0 = Date.now();
  if (id) enter(id);
  try {
    return await realFetch(input, init);
  } finally {
    if (id) leave(id);
    if (id && kind === "model") C.modelWaitMs += Date.now() - t0;
  }
};
`;

// The Worker's entry: counts its requests, and wraps every Durable Object class it exports.
const _ENTRY = `
import { objectContext, enter, leave, busyObjects } from "./cost_prelude.js";
import * as mod from "./index.js";
const worker = mod.default;
const C = globalThis.__benchCost;
const add = (o, k, n = 1) => { o[k] = (o[k] ?? 0) + n; };

// The table a statement reads or writes, from its text: DDL counts under "(schema)".
function tableOf(query) {
  const q = query.replace(/\\s+/g, " ").trim();
  if (/^(CREATE|DROP|ALTER|PRAGMA)\\b/i.test(q)) return "(schema)";
  const m = /^(?:INSERT|REPLACE)(?: OR \\w+)? INTO (\\w+)/i.exec(q) ?? /^UPDATE(?: OR \\w+)? (\\w+)/i.exec(q) ??
    /^DELETE FROM (\\w+)/i.exec(q) ?? /\\bFROM (\\w+)/i.exec(q);
  return m ? m[1] : "(other)";
}
function rows(table) {
  return C.sql[table] ??= { read: 0, written: 0, statements: 0 };
}
// A cursor's counts are final once it is consumed, which the code does before the next await.
export function flush() {
  for (const [table, cursor] of C.pending.splice(0)) {
    const r = rows(table);
    r.read += cursor.rowsRead;
    r.written += cursor.rowsWritten;
  }
}

function countStorage(storage) {
  const sql = storage.sql, exec = sql.exec;
  sql.exec = (query, ...bindings) => {
    const cursor = exec.call(sql, query, ...bindings);
    const table = tableOf(query);
    rows(table).statements++;
    if (C.pending.push([table, cursor]) > 1000) flush();
    return cursor;
  };
  // Key-value calls live in the hidden _cf_KV table, billed as rows: one per key asked, written
  // or deleted, one per key listed (at least one per list).
  const kv = storage.kv, { get, put, list } = kv, del = kv.delete;
  // Looked up per call, never kept: a reset replaces the counts, and an object started before it
  // (a warm chat's) must count into the new ones.
  const kvRows = () => rows("_cf_KV (kv API)");
  kv.get = (...a) => { kvRows().statements++; kvRows().read++; return get.apply(kv, a); };
  kv.put = (...a) => { kvRows().statements++; kvRows().written++; return put.apply(kv, a); };
  kv.delete = (...a) => { kvRows().statements++; kvRows().written++; return del.apply(kv, a); };
  kv.list = (...a) => {
    const all = [...list.apply(kv, a)];
    kvRows().statements++;
    kvRows().read += Math.max(1, all.length);
    return all[Symbol.iterator]();
  };
  // "Each setAlarm is billed as a single row written" (deleteAlarm taken to cost the same).
  for (const name of ["setAlarm", "deleteAlarm"]) {
    const fn = storage[name];
    storage[name] = (...a) => {
      const alarmRows = rows("(alarm)");
      alarmRows.statements++;
      alarmRows.written++;
      return fn.apply(storage, a);
    };
  }
}

// D1: rows from each result's meta; first() and raw() carry none (counted as unmetered).
const realStatement = new WeakMap();
function countD1(db) {
  const statement = (s) => {
    const p = new Proxy(s, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (key === "bind") return (...a) => statement(value.apply(target, a));
        if (key === "run" || key === "all") {
          return (...a) => (C.d1.statements++, busyWhile(() => value.apply(target, a)));
        }
        if (key === "first" || key === "raw") C.d1.unmetered++, C.d1.statements++;
        return value.bind(target);
      },
    });
    realStatement.set(p, s);
    return p;
  };
  // The calling object waits on D1: busy meanwhile.
  const busyWhile = async (call) => {
    const id = objectContext.getStore();
    if (id) enter(id);
    try {
      const r = await call();
      (Array.isArray(r) ? r : [r]).forEach(meta);
      return r;
    } finally {
      if (id) leave(id);
    }
  };
  const meta = (r) => { C.d1.read += r?.meta?.rows_read ?? 0; C.d1.written += r?.meta?.rows_written ?? 0; };
  return new Proxy(db, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "prepare") return (...a) => statement(value.apply(target, a));
      if (key === "batch") {
        return (list, ...a) => {
          C.d1.statements += list.length;
          return busyWhile(() => value.call(target, list.map((s) => realStatement.get(s) ?? s), ...a));
        };
      }
      return value.bind(target);
    },
  });
}

// Every call on a stub is one billed request (an RPC session, or a fetch).
function countNamespace(ns, binding) {
  const stub = (s) => new Proxy(s, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function" || key === "then" || typeof key === "symbol") return value;
      // Called bare: on an RPC stub, \`value.apply\` would name a remote property.
      return (...args) => { add(C.doRequests, binding); return value(...args); };
    },
  });
  return new Proxy(ns, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== "function") return value;
      if (key === "get" || key === "getByName") return (...args) => stub(value.apply(target, args));
      return value.bind(target);
    },
  });
}

function countedEnv(env) {
  const out = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (value && typeof value.idFromName === "function") out[name] = countNamespace(value, name);
    else if (value && typeof value.prepare === "function" && typeof value.batch === "function") {
      out[name] = countD1(value);
    }
  }
  return out;
}

let nextObject = 0;
// A subclass of a Durable Object class whose storage, env and entries are counted.
function counted(Base, className) {
  class Counted extends Base {
    constructor(ctx, env) {
      countStorage(ctx.storage);
      const id = \`\${className}#\${++nextObject}\`;
      // An instance started: in this local run, a new object (none is evicted while measured).
      add(C.instances, className);
      const waitUntil = ctx.waitUntil;
      ctx.waitUntil = (p) => {
        enter(id);
        Promise.resolve(p).finally(() => leave(id)).catch(() => {});
        return waitUntil.call(ctx, p);
      };
      super(ctx, countedEnv(env));
      this.__benchId = id;
    }
  }
  // The exported class may be a subclass made by the composition root: walk its whole chain.
  const methods = new Map();
  for (let p = Base.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    if (/^DurableObject/.test(p.constructor?.name ?? "")) break;
    for (const name of Object.getOwnPropertyNames(p)) {
      const fn = Object.getOwnPropertyDescriptor(p, name).value;
      if (name !== "constructor" && typeof fn === "function" && !methods.has(name)) methods.set(name, fn);
    }
  }
  for (const [name, fn] of methods) {
    Object.defineProperty(Counted.prototype, name, {
      configurable: true,
      writable: true,
      value: async function (...args) {
        if (name === "alarm") add(C.doRequests, \`\${className} alarm\`);
        const id = this.__benchId;
        enter(id);
        try {
          return await objectContext.run(id, () => fn.apply(this, args));
        } finally {
          leave(id);
        }
      },
    });
  }
  return Counted;
}

const classes = {};
for (const [name, value] of Object.entries(mod)) {
  if (name !== "default" && typeof value === "function" && value.prototype) {
    classes[name] = counted(value, name);
  }
}
export const { ${"${CLASSES}"} } = classes;

function report(reset) {
  flush();
  const body = {
    worker_requests: C.workerRequests, do_requests: C.doRequests, sql: C.sql, d1: C.d1,
    subrequests: C.subrequests, model_wait_ms: C.modelWaitMs, do_active_ms: C.doActiveMs,
    instances: C.instances, busy_objects: busyObjects(),
  };
  if (reset) {
    Object.assign(C, {
      workerRequests: 0, doRequests: {}, sql: {}, d1: { read: 0, written: 0, unmetered: 0, statements: 0 },
      subrequests: {}, modelWaitMs: 0, doActiveMs: 0, instances: {},
    });
  }
  return body;
}

const handlers = {
  fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/cost") return Response.json(report(url.searchParams.has("reset")));
    C.workerRequests++;
    return worker.fetch(request, countedEnv(env), ctx);
  },
};
if (worker.email) handlers.email = (message, env, ctx) => worker.email(message, countedEnv(env), ctx);
export default handlers;
`;

/** What one `GET /__bench/cost` answers: everything counted since the last reset. */
export interface CostCounts {
  /** Requests to the Worker's fetch handler. */
  worker_requests: number;
  /** Calls on Durable Object stubs by binding, and alarm invocations by class ("X alarm"). */
  do_requests: Record<string, number>;
  /** SQLite rows by table (cursor `rowsRead`/`rowsWritten`; the KV API and alarms as billed). */
  sql: Record<string, { read: number; written: number; statements: number }>;
  /**
   * D1 rows from result metas (`unmetered`: first()/raw() calls, which carry none), and the
   * statements run (each of a batch counted).
   */
  d1: { read: number; written: number; unmetered: number; statements: number };
  /** Outgoing fetches: "model", "platform" (a bot API), or the host. */
  subrequests: Record<string, number>;
  /** Time Durable Objects spent waiting on model calls. */
  model_wait_ms: number;
  /**
   * Time Durable Objects were active: some entry (call, alarm, waitUntil, fetch, D1 call, timer)
   * unfinished, summed over objects (workerd's clock moves on I/O, so CPU-only stretches are 0).
   */
  do_active_ms: number;
  /** Durable Object instances started, by class: in a local run, the new objects. */
  instances: Record<string, number>;
  /** Objects with unfinished work at the moment of reading (not reset). */
  busy_objects: number;
}

/**
 * Bundles a copy of the Worker at `scriptPath` (an `index.js` bundle exporting Durable Object
 * classes `classes`) that counts what a turn costs, and returns the copy's path. The product is
 * not touched: the counting lives in the wrapper, its subclasses of the classes, and proxies
 * around the bindings.
 */
export async function costCountingBuild(scriptPath: string, classes: string[]): Promise<string> {
  const dir = scriptPath.replace(/[^/]+$/, "");
  await Deno.writeTextFile(`${dir}cost_prelude.js`, _PRELUDE);
  const entry = _ENTRY.replace("${CLASSES}", classes.join(", "));
  await Deno.writeTextFile(`${dir}cost_counted_entry.js`, entry);
  return await bundleWorker(`${dir}cost_counted_entry.js`, `${dir}cost_counted/index.js`);
}

/** Reads (and with `reset`, clears) a cost-counting Worker's counts. */
export async function readCost(workerUrl: string, reset = false): Promise<CostCounts> {
  const res = await fetch(new URL(`__bench/cost${reset ? "?reset=1" : ""}`, workerUrl));
  if (!res.ok) throw new Error(`GET /__bench/cost: ${res.status} ${await res.text()}`);
  return await res.json() as CostCounts;
}
