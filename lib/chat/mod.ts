// The shape of a chat: the contract every platform adapter fills, the reply channel over them, chat commands and their texts, message splitting; runtime-neutral.
export {
  CHOICE_DATA_PREFIX,
  isChoiceData,
  parseJsonBody,
  PayloadError,
  RESEND_NOTE,
} from "./platform.ts";
export type {
  Choice,
  EventContext,
  InDoubt,
  Ingress,
  OutgoingFile,
  PartSend,
  PlatformAdapter,
  PlatformChoice,
  PlatformEnv,
  PlatformMessage,
  PreviewResult,
  RawRequest,
  ReplyTarget,
  SendResult,
  Unverifiable,
  WebhookAnswer,
} from "./platform.ts";
export { PART_ROOM, replyChannel } from "./reply_channel.ts";
export type { ReplyChannel } from "./reply_channel.ts";
export { fileLabel, fileNote, sendFilePart } from "./file_part.ts";
export type { FileSources } from "./file_part.ts";
export {
  approvalAnsweredText,
  approvalClickText,
  approvalQuestionText,
  approvalStatusText,
  compactText,
  contextText,
  forgetText,
  grantsText,
  HELP_TEXT,
  jobCreatedText,
  jobsText,
  newConversationText,
  noMemoryText,
  notYourTurnText,
  parseCommand,
  parseYesNo,
  QUEUE_FULL_NOTICE,
  QUEUED_NOTICE,
  START_TEXT,
  statusText,
  STEER_USAGE,
  stopText,
  unknownCommandText,
} from "./session_commands.ts";
export type { ApprovalAnswer, ClickAnswer, ParsedCommand } from "./session_commands.ts";
export type { Sender } from "./sender.ts";
export { modelStatusText, modelText } from "./model_command.ts";
export type { ModelAnswer } from "./model_command.ts";
export { splitMessage } from "./split_message.ts";
