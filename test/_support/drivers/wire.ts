// The drivers' shared wire helpers: a payload's body, a body as text, a signing time; Deno (tests, fuzzer, chaos run).
import type { Driver } from "./mod.ts";

/** The body of `payload` as `driver`'s platform sends it: JSON, or a form of its fields. */
export function encode(driver: Pick<Driver, "form">, payload: object): string {
  if (!driver.form) return JSON.stringify(payload);
  return new URLSearchParams(Object.entries(payload).map(([k, v]) => [k, String(v)])).toString();
}

/** `body` as text when it is valid UTF-8 (what a package signer that takes strings can sign). */
export function utf8(body: string | Uint8Array): string | undefined {
  if (typeof body === "string") return body;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
}

/** Unix seconds of a signing time (now when it is left out or not a number). */
export function seconds(at: number | string | undefined): number {
  const n = typeof at === "string" && /^[0-9]{1,15}$/.test(at) ? Number(at) : at;
  return typeof n === "number" ? n : Math.floor(Date.now() / 1000);
}
