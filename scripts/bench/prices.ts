// Cloudflare's published Workers Paid, Durable Objects (SQLite-backed) and D1 prices, with the date they were read, for the bench's cost table; Deno.

/**
 * The prices a turn's counts are multiplied by: the marginal rate of each billed dimension on the
 * Workers Paid plan ($5 a month), past the monthly allotment it includes (`included`, not
 * subtracted in the cost table: at a million turns and up they are soon used). Figures as read,
 * with the pages they were read from.
 */
export const PRICES = {
  /** When these figures were read from the pages below. */
  readOn: "2026-11-26",
  sources: {
    workers: "https://developers.cloudflare.com/workers/platform/pricing/",
    durableObjects: "https://developers.cloudflare.com/durable-objects/platform/pricing/",
    d1: "https://developers.cloudflare.com/d1/platform/pricing/",
  },
  /** "10 million included per month +$0.30 per additional million"; subrequests are not billed. */
  workerRequestPerMillion: 0.30,
  /** "30 million CPU milliseconds included per month +$0.02 per additional million CPU ms". */
  workerCpuMsPerMillion: 0.02,
  /** "1 million, + $0.15/million": HTTP requests, RPC sessions (each stub call) and alarms. */
  doRequestPerMillion: 0.15,
  /** "400,000 GB-s, + $12.50/million GB-s", wall time while active. */
  doGbSecondPerMillion: 12.50,
  /** "Duration billing charges for the 128 MB of memory your Durable Object is allocated". */
  doMemoryGb: 128 / 1024,
  /** SQLite-backed storage: "First 25 billion / month included + $0.001 / million rows". */
  sqlRowReadPerMillion: 0.001,
  /** "First 50 million / month included + $1.00 / million rows"; each setAlarm is one row. */
  sqlRowWrittenPerMillion: 1.00,
  /** D1 rates match the SQLite-backed objects' ("match D1"). */
  d1RowReadPerMillion: 0.001,
  d1RowWrittenPerMillion: 1.00,
  included: {
    workerRequests: 10_000_000,
    workerCpuMs: 30_000_000,
    doRequests: 1_000_000,
    doGbSeconds: 400_000,
    rowsRead: 25_000_000_000,
    rowsWritten: 50_000_000,
  },
} as const;

/** One kind of turn's billed quantities, per turn. */
export interface TurnUsage {
  workerRequests: number;
  /** CPU ms (the bench reads workerd's, Worker and objects together: an upper bound). */
  cpuMs: number;
  doRequests: number;
  /** Durable Object active wall time (ms). */
  doActiveMs: number;
  sqlRowsRead: number;
  sqlRowsWritten: number;
  d1RowsRead: number;
  d1RowsWritten: number;
}

/** Dollars per million turns, by billed dimension and in total. */
export interface TurnCost {
  workerRequests: number;
  cpu: number;
  doRequests: number;
  doDuration: number;
  rowsRead: number;
  rowsWritten: number;
  total: number;
}

/** What a million turns of `usage` cost at `PRICES`' marginal rates, dimension by dimension. */
export function dollarsPerMillionTurns(usage: TurnUsage): TurnCost {
  // A quantity per turn times a price per million units is dollars per million turns.
  const cost = {
    workerRequests: usage.workerRequests * PRICES.workerRequestPerMillion,
    cpu: usage.cpuMs * PRICES.workerCpuMsPerMillion,
    doRequests: usage.doRequests * PRICES.doRequestPerMillion,
    doDuration: doDurationDollars(usage.doActiveMs),
    rowsRead: usage.sqlRowsRead * PRICES.sqlRowReadPerMillion +
      usage.d1RowsRead * PRICES.d1RowReadPerMillion,
    rowsWritten: usage.sqlRowsWritten * PRICES.sqlRowWrittenPerMillion +
      usage.d1RowsWritten * PRICES.d1RowWrittenPerMillion,
  };
  return { ...cost, total: Object.values(cost).reduce((a, b) => a + b, 0) };
}

/** Dollars per million turns for `activeMs` of Durable Object wall time each (128 MB billed). */
export function doDurationDollars(activeMs: number): number {
  return (activeMs / 1000) * PRICES.doMemoryGb * PRICES.doGbSecondPerMillion;
}
