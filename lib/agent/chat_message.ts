// The conversation's message type (the Chat Completions wire shape), in a file of its own so the model client and the files that read messages share it without importing each other; any runtime.
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

/** A message of the conversation, in the Chat Completions wire shape. */
export type ChatMessage = ChatCompletionMessageParam;
