// Makes testdata/invoice.pdf, the PDF fixture of lib/media tests, with pdfkit (0.20.2): `npm i pdfkit` in a scratch folder, then `node make_invoice_pdf.cjs invoice.pdf`; Node.
const PDFDocument = require("pdfkit");
const fs = require("fs");
const doc = new PDFDocument({
  compress: true,
  info: {
    Title: "baton fixture",
    CreationDate: new Date(0),
    ModDate: new Date(0),
    Producer: "pdfkit",
    Creator: "pdfkit",
  },
});
doc.pipe(fs.createWriteStream(process.argv[2]));
doc.fontSize(14).text("Invoice 4711 from Example Tools Ltd.");
doc.text("Total due: 128.40 EUR by 2026-12-01.");
doc.end();
