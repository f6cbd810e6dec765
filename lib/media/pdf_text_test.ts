// Unit tests of pdfText's pdf.js loading: once per loader (per deployment), a failed load tried again by the next PDF; runs under Deno.
import { assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { type PdfjsLoader, type PdfjsModule, pdfText } from "./pdf_text.ts";

/** The PDF fixture, made by testdata/make_invoice_pdf.cjs with pdfkit. */
const PDF = await Deno.readFile(new URL("./testdata/invoice.pdf", import.meta.url));

/** pdf.js from node_modules behind a loader that counts its calls (and fails while `failing`). */
function countedLoader(): { loader: PdfjsLoader; loads: () => number; failing: boolean } {
  const state = {
    calls: 0,
    failing: false,
    loader: (): Promise<PdfjsModule> => {
      state.calls++;
      return state.failing
        ? Promise.reject(new Error("pdf.js could not be loaded"))
        : import("unpdf/pdfjs");
    },
    loads: () => state.calls,
  };
  return state;
}

Deno.test("pdfText() loads pdf.js once per loader: two deployments' loaders each load their own", async () => {
  const one = countedLoader();
  const other = countedLoader();
  const read = await pdfText(PDF, one.loader);
  assertEquals(read.pages, 1);
  await pdfText(PDF, one.loader);
  assertStrictEquals(one.loads(), 1, "the second PDF reuses the first load");
  assertStrictEquals(other.loads(), 0, "a loader is called only for its own deployment's PDFs");
  assertEquals(await pdfText(PDF, other.loader), read);
  assertStrictEquals(other.loads(), 1);
  assertStrictEquals(one.loads(), 1);
});

Deno.test("pdfText() tries a failed load again on the next PDF", async () => {
  const flaky = countedLoader();
  flaky.failing = true;
  const failed = await assertRejects(() => pdfText(PDF, flaky.loader));
  assertStrictEquals(String(failed), "Error: pdf.js could not be loaded");
  flaky.failing = false;
  assertEquals((await pdfText(PDF, flaky.loader)).pages, 1);
  assertStrictEquals(flaky.loads(), 2);
  await pdfText(PDF, flaky.loader);
  assertStrictEquals(flaky.loads(), 2, "a load that worked is kept");
});
