// What test/_support/files_worker.ts's tools return, shared with test/files_out_test.ts (which cannot import the Worker); any runtime.

/** A 1×1 PNG, base64: the bytes `draw_chart` returns. */
export const CHART_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** The text `write_report` returns as report.txt. */
export const REPORT_TEXT = "quarterly report: all good\n";
