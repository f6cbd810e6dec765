// The text of a PDF through pdf.js (unpdf's build for edge runtimes), loaded on first use through the loader of the deployment that reads it; runtime-neutral.

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

/**
 * pdf.js as each loader loaded it: one load per loader (per deployment that reads PDFs), kept
 * while the loader is. Weakly keyed, and nothing module-global that one deployment could turn on
 * or off for another in the same isolate.
 */
const _modules = new WeakMap<PdfjsLoader, Promise<PdfjsModule>>();

/**
 * Extracts the text layer of `bytes` (a PDF by its magic bytes) with the pdf.js `loader` gives
 * (the deployment's, `defineBaton({ pdf })`; the library cannot import pdf.js itself: a literal
 * `import("unpdf/pdfjs")` here would put its 1.6 MB into every bundle, and workerd compiles all of
 * it at every start). Rejects for a PDF pdf.js cannot open (corrupt, encrypted), or when the
 * loader fails: the caller words that for the user. A scanned PDF has no text layer: its text is
 * "".
 */
export async function pdfText(bytes: Uint8Array, loader: PdfjsLoader): Promise<PdfText> {
  // One load per loader; a failed load is tried again by the next PDF.
  let load = _modules.get(loader);
  if (!load) {
    const loading = load = loader();
    _modules.set(loader, loading);
    loading.catch(() => {
      if (_modules.get(loader) === loading) _modules.delete(loader);
    });
  }
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
