// The reference deployment: this repo's Worker, built on the package's public API (functions/mod.ts) with the tools of functions/tools.ts; Workers.
import { defineBaton } from "./mod.ts";
import { loadPdfjs } from "./pdfjs/load_pdfjs.ts";
import { tools } from "./tools.ts";

// Every feature in: PDFs are read (pdf.js uploaded as a module of its own, wrangler.toml's base_dir).
const baton = defineBaton({ tools, pdf: loadPdfjs });

// Exported by the names wrangler.toml's bindings and migrations use.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

export default baton;
