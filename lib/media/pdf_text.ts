// The text of a PDF through pdf.js (unpdf's build for edge runtimes), loaded on first use through the loader a deployment that reads PDFs gives; runtime-neutral.

/** A PDF's text, its pages joined by blank lines, and how many pages it has. */
export interface PdfText {
  text: string;
  pages: number;
}

/** The part of pdf.js's module (`unpdf/pdfjs`) that reading a PDF's text uses. */
export interface PdfjsModule {
  getDocument(src: { data: Uint8Array; useSystemFonts?: boolean; verbosity?: number }): {
    promise: Promise<PdfjsDocument>;
    destroy(): Promise<void>;
  };
}

/** An open PDF, as `PdfjsModule.getDocument` gives it. */
export interface PdfjsDocument {
  numPages: number;
  getPage(pageNumber: number): Promise<{
    // A run of text (`str`), or a marked-content marker (`type`, no `str`).
    getTextContent(): Promise<{ items: Array<{ str?: string; hasEOL?: boolean; type?: string }> }>;
  }>;
}

/** Loads pdf.js: `() => import(…)` of the module as the bundle holds it. */
export type PdfjsLoader = () => Promise<PdfjsModule>;

let _loader: PdfjsLoader | undefined;
let _module: Promise<PdfjsModule> | undefined;

/**
 * Says where pdf.js comes from; null: PDFs are not read (`readsPdf()` false). The library cannot
 * import it itself: a literal `import("unpdf/pdfjs")` here would put its 1.6 MB into every bundle,
 * and workerd compiles all of it at every start. A deployment opts in (`defineBaton({ pdf })`
 * passes `functions/pdfjs/load_pdfjs.ts`, which wrangler uploads as a module of its own). One
 * loader per isolate: it serves every deployment of the bundle.
 */
export function usePdfjs(loader: PdfjsLoader | null): void {
  if ((loader ?? undefined) === _loader) return;
  _loader = loader ?? undefined;
  _module = undefined;
}

/** Whether PDFs are read here: a loader was given (`usePdfjs`). */
export function readsPdf(): boolean {
  return _loader !== undefined;
}

/**
 * Extracts the text layer of `bytes` (a PDF by its magic bytes). Rejects for a PDF pdf.js cannot
 * open (corrupt, encrypted), or when no loader was given (`usePdfjs`): the caller words that for
 * the user. A scanned PDF has no text layer: its text is "".
 */
export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  if (!_loader) throw new Error("pdf.js is not configured (usePdfjs)");
  // One load per isolate; a failed load is tried again by the next PDF.
  const load = _module ??= _loader();
  load.catch(() => {
    if (_module === load) _module = undefined;
  });
  const { getDocument } = await load;
  // pdf.js may take the buffer over (transfer it): it gets a copy, the caller keeps its bytes.
  // Quiet: pdf.js warns on the console about what it repairs, and the caller says what failed.
  // System fonts: text extraction needs no glyphs, and there are no font files to fetch.
  const task = getDocument({ data: bytes.slice(), useSystemFonts: true, verbosity: 0 });
  try {
    const pdf = await task.promise;
    const pages: string[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const { items } = await (await pdf.getPage(n)).getTextContent();
      // As unpdf's extractText: each run's string, a line break where pdf.js saw one.
      pages.push(
        items.filter((item) => item.str != null).map((item) => item.str + (item.hasEOL ? "\n" : ""))
          .join(""),
      );
    }
    return {
      text: pages.map((page) => page.trim()).filter(Boolean).join("\n\n"),
      pages: pdf.numPages,
    };
  } finally {
    await task.destroy();
  }
}
