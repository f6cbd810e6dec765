// Bench readings of the workerd processes it started: pids, CPU time, resident memory; Deno (Linux /proc).

/** Pids of the workerd processes this process started (Linux /proc; empty elsewhere). */
export async function workerdPids(): Promise<number[]> {
  const pids: number[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => "");
      const m = /^\d+ \((.*)\) \S+ (\d+) /.exec(stat);
      if (m?.[1] === "workerd" && Number(m[2]) === Deno.pid) pids.push(Number(entry.name));
    }
  } catch {
    // No /proc: the CPU and memory figures are left out.
  }
  return pids;
}

/** The Miniflare temp dir (`…/miniflare-<hex>`) that `pids` hold files open in, if any. */
export async function miniflareTmpDir(pids: number[]): Promise<string | undefined> {
  for (const pid of pids) {
    try {
      for await (const fd of Deno.readDir(`/proc/${pid}/fd`)) {
        const target = await Deno.readLink(`/proc/${pid}/fd/${fd.name}`).catch(() => "");
        const dir = /^(.*\/miniflare-[0-9a-f]+)\//.exec(target)?.[1];
        if (dir) return dir;
      }
    } catch {
      // Process gone or no /proc.
    }
  }
  return undefined;
}

/** User + system CPU time of `pids` in ms (Linux /proc, clock ticks of 10 ms); NaN if unknown. */
export async function cpuMs(pids: number[]): Promise<number> {
  if (!pids.length) return NaN;
  let ticks = 0;
  for (const pid of pids) {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/** Resident memory of a set of processes, summed, in KiB. */
export interface Memory {
  /** VmRSS: resident now. */
  rssKiB: number;
  /** VmHWM: the kernel's resident high-water mark since each process started. */
  hwmKiB: number;
}

/** VmRSS and VmHWM of `pids`, summed; NaN when /proc is missing. */
export async function memory(pids: number[]): Promise<Memory> {
  if (!pids.length) return { rssKiB: NaN, hwmKiB: NaN };
  let rssKiB = 0, hwmKiB = 0;
  for (const pid of pids) {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    rssKiB += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
    hwmKiB += Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  }
  return { rssKiB, hwmKiB };
}

/** What an RSS sampler saw between start and stop. */
export interface RssPeak extends Memory {
  /** Samples taken. */
  samples: number;
}

/**
 * Samples VmRSS of `pids` every `everyMs` until `stop()`, which resolves with the highest
 * sampled RSS and the VmHWM at that moment (which also catches peaks between samples).
 */
export function sampleRss(pids: number[], everyMs: number): { stop(): Promise<RssPeak> } {
  let peak = 0, samples = 0, reading: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    reading = reading.then(async () => {
      peak = Math.max(peak, (await memory(pids)).rssKiB);
      samples++;
    });
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await reading;
      const last = await memory(pids);
      return { rssKiB: Math.max(peak, last.rssKiB), hwmKiB: last.hwmKiB, samples: samples + 1 };
    },
  };
}

/** The CPU model name from /proc/cpuinfo, or "unknown". */
export async function cpuModel(): Promise<string> {
  try {
    const info = await Deno.readTextFile("/proc/cpuinfo");
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Machine-wide CPU time since boot from /proc/stat, in clock ticks; all zero when unknown. */
export interface MachineCpu {
  total: number;
  idle: number;
  iowait: number;
  steal: number;
}

/** Reads the machine-wide CPU counters (Linux /proc/stat). */
export async function machineCpu(): Promise<MachineCpu> {
  try {
    const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.split(/\s+/).slice(1, 9)
      .map(Number);
    const total = user + nice + system + idle + iowait + irq + softirq + steal;
    return { total, idle, iowait, steal };
  } catch {
    return { total: 0, idle: 0, iowait: 0, steal: 0 };
  }
}

/** User + system CPU time of this process in ms (Linux /proc); NaN if unknown. */
export async function ownCpuMs(): Promise<number> {
  try {
    const stat = await Deno.readTextFile("/proc/self/stat");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
