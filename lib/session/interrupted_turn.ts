// How an ended turn's messages are kept in the transcript: the paired prefix (every tool call with its result), then a note of why it ended; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";

/** An ended turn's messages as kept: the paired prefix, then `(interrupted: why)`. */
export function interruptedTurn(messages: ChatMessage[], why: string): ChatMessage[] {
  return [..._pairedPrefix(messages), { role: "assistant", content: `(interrupted: ${why})` }];
}

/** The longest prefix in which every assistant tool call has its result. */
function _pairedPrefix(messages: ChatMessage[]): ChatMessage[] {
  let end = 0;
  let open = 0;
  for (const [i, message] of messages.entries()) {
    if (message.role === "assistant") open = message.tool_calls?.length ?? 0;
    else if (message.role === "tool") open--;
    if (open <= 0) end = i + 1;
  }
  return messages.slice(0, end);
}
