// The OpenAI-compatible API's codecs: Chat Completions and Responses (requests, objects, streams) and the ids of runs, jobs and responses; runtime-neutral.
export {
  chatCompletion,
  chatCompletionChunk,
  chatCompletionRequest,
  chatCompletionUsageChunk,
  chatTurnInput,
  completionId,
  conversationFingerprint,
  hashHex,
  modelObject,
  modelParams,
  SESSION_ID,
  sessionIdField,
} from "./openai_api.ts";
export type { ChatCompletionRequest, ChatTurnInput } from "./openai_api.ts";
export { responseRequest, responseTurn } from "./responses_api.ts";
export {
  inputItemsList,
  isResponseMeta,
  parseResponseId,
  responseId,
  responseObject,
  responseStatus,
} from "./response_object.ts";
export type { ResponseMeta, ResponseTurn } from "./responses_api.ts";
export { responseStreamFrames } from "./responses_stream.ts";
export { outputFileItems, type ReplyFile } from "./reply_files.ts";
export { mediaBodyLimit, mediaPayloadChars } from "./media_body.ts";
export { jobId, parseJobId, parseRunId, RUN_ID_HEADER, runId } from "./run_ids.ts";
