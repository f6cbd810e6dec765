// End to end in workerd: an object's calls out and turns leave no timer active once they end, so thousands of them never reach workerd's cap of 10,000 active timers; Deno + workerd.
import { assertEquals, assertMatch } from "@std/assert";
import { startWorker } from "./_support/worker.ts";

const entry = "test/_support/timers_worker.ts";

Deno.test("fetchOut() and runClaimedTurn() in one object, 12,000 times each, never hit workerd's timer cap", async () => {
  const w = await startWorker({ entry });
  try {
    // What the calls did before (AbortSignal.timeout): workerd counts each until it fires.
    const raw = await w.fetch("/raw?n=10001&object=raw");
    assertEquals(raw.status, 500);
    assertMatch(await raw.text(), /max active timeouts: 10000/);
    // Across requests to one object: its timers are counted together.
    for (const path of ["/fetch-out", "/fetch-out", "/turns", "/turns"]) {
      const res = await w.fetch(`${path}?n=6000`);
      assertEquals(`${res.status} ${await res.text()}`, "200 ok 6000", path);
    }
  } finally {
    await w.dispose();
  }
});
