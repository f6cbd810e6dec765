// A tool result cut to TOOL_RESULT_MAX_CHARS with a note, before the model sees it and the transcript keeps it; any runtime.

/**
 * `content` when it is at most `max` characters, else its first `max` and a note saying how much
 * was cut — so one huge result (a web page, a file) cannot fill the model's context, and the
 * model knows it saw only part and can ask for less.
 */
export function cutToolResult(content: string, max: number | undefined): string {
  if (max === undefined || content.length <= max) return content;
  const note = `\n[tool result cut: ${content.length - max} of ${content.length} characters ` +
    `left out (TOOL_RESULT_MAX_CHARS=${max}); ask for a smaller part if you need more]`;
  return content.slice(0, max) + note;
}
