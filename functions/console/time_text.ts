// Times as the console shows them: "3 min ago", a clock time, a duration; browser and Deno.

/** How long ago `at` (epoch ms or an ISO string) was, in words. */
export function agoText(at: number | string | null, now = Date.now()): string {
  if (at === null) return "never";
  const then = typeof at === "number" ? at : Date.parse(at);
  if (!Number.isFinite(then)) return "unknown";
  const s = Math.max(0, Math.round((now - then) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** `at` as a local time of day with milliseconds (the timeline's resolution). */
export function clockText(at: number | null): string {
  if (at === null) return "—";
  const d = new Date(at);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${
    pad(d.getMilliseconds(), 3)
  }`;
}

/** A duration in ms as "840 ms" or "12.3 s". */
export function msText(ms: number | null): string {
  if (ms === null) return "—";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
