// test/files_out_test.ts's own Worker: baton with tools that return files (an image, a text report), through the public API only; Workers (cloudflare:workers).
import { defineBaton, defineTool } from "../../functions/mod.ts";
import { CHART_PNG_BASE64, REPORT_TEXT } from "./files_fixtures.ts";

/** Returns an image file beside its text. */
const drawChart = defineTool<Record<string, never>>({
  name: "draw_chart",
  description: "Draws the chart.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => ({
    summary: "one chart drawn",
    files: [{ name: "chart.png", type: "image/png", data: CHART_PNG_BASE64 }],
  }),
});

/** Returns a text file (a document on Telegram). */
const writeReport = defineTool<Record<string, never>>({
  name: "write_report",
  description: "Writes the report.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
  run: () => ({
    files: [{ name: "report.txt", type: "text/plain", data: btoa(REPORT_TEXT) }],
  }),
});

const baton = defineBaton({ tools: [drawChart, writeReport] });

// The names the test's Miniflare binds.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

export default baton;
