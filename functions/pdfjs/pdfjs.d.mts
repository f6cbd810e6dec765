// The types of ./pdfjs.mjs (a symlink to unpdf's pdf.js build, which ships its types apart); TypeScript only.
export * from "unpdf/pdfjs";
