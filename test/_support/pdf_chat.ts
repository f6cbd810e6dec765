// The invoice PDF fixture and a chat completion that carries it as a file part, for the tests of who reads PDFs; Deno.
import { encodeBase64 } from "../../lib/runtime/mod.ts";

/** The PDF fixture (lib/media/testdata/make_invoice_pdf.cjs, pdfkit): one page, an invoice. */
export const INVOICE_PDF = await Deno.readFile(
  new URL("../../lib/media/testdata/invoice.pdf", import.meta.url),
);

/** A chat completion whose user message asks what is due, the PDF as its second (file) part. */
export function pdfChat(user?: string): Record<string, unknown> {
  return {
    model: "any",
    ...(user ? { user } : {}),
    messages: [{
      role: "user",
      content: [{ type: "text", text: "what is due?" }, {
        type: "file",
        file: {
          filename: "invoice.pdf",
          file_data: `data:application/pdf;base64,${encodeBase64(INVOICE_PDF)}`,
        },
      }],
    }],
  };
}
