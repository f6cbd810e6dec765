// The text of a PDF through unpdf (pdf.js built for edge runtimes), loaded on first use so a Worker that never reads a PDF never evaluates it; runtime-neutral.

/** A PDF's text, its pages joined by blank lines, and how many pages it has. */
export interface PdfText {
  text: string;
  pages: number;
}

/**
 * Extracts the text layer of `bytes` (a PDF by its magic bytes). Rejects for a PDF pdf.js cannot
 * open (corrupt, encrypted): the caller words that for the user. A scanned PDF has no text
 * layer: its text is "". The extractor is imported lazily: it is most of a megabyte of code, and
 * a deployment's isolates that never see a PDF should not pay for evaluating it.
 */
export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  // pdf.js may take the buffer over (transfer it): it gets a copy, the caller keeps its bytes.
  // Quiet: pdf.js warns on the console about what it repairs, and the caller says what failed.
  const pdf = await getDocumentProxy(bytes.slice(), { verbosity: 0 });
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: false });
    return {
      text: text.map((page) => page.trim()).filter(Boolean).join("\n\n"),
      pages: totalPages,
    };
  } finally {
    await pdf.loadingTask.destroy();
  }
}
