// Running a step's baton tool calls (approval, the toolCall hook, results cut and files stored); any runtime with node:async_hooks.
import type { ChatMessage, ToolCall } from "./chat_model.ts";
import type { ToolRegistry, ToolRunOptions } from "./tools.ts";
import type { PendingCall, TurnRequest, TurnResume } from "./turn_request.ts";
import { currentContext, frameLogFields, type SessionContext } from "../runtime/mod.ts";
import { callHook, hookContext } from "./turn_hooks.ts";
import { cutToolResult } from "./tool_result_cut.ts";
import {
  type AttachedFile,
  storeToolFiles,
  type ToolFileStore,
  toolResultFiles,
} from "./tool_files.ts";

/**
 * Runs a step's baton tool calls in order (a denied one only gets its denial; one a resumed
 * turn ran before gets its stored result); returns the client's calls.
 */
export async function runToolCalls(
  request: TurnRequest,
  added: ChatMessage[],
  calls: ToolCall[],
  clientNames: Set<string>,
  denied: Record<string, string>,
  resumed?: TurnResume,
): Promise<ToolCall[]> {
  const { tools, signal } = request;
  const stored = resumed?.results ?? {};
  // The turn's context as its tools are given it: its frame is bound once, before the turn.
  const context: SessionContext = Object.freeze(currentContext());
  for (const call of calls) {
    if (clientNames.has(_callName(call))) continue; // the client runs its own
    if (Object.hasOwn(denied, call.id)) {
      const content = JSON.stringify({ error: denied[call.id] });
      added.push({ role: "tool", tool_call_id: call.id, content });
      continue;
    }
    if (Object.hasOwn(stored, call.id)) {
      added.push({ role: "tool", tool_call_id: call.id, content: stored[call.id] });
      continue;
    }
    const name = call.type === "function" ? call.function.name : call.type;
    const refusal = await _toolCallRefusal(request, call, context);
    if (refusal !== null) {
      const content = JSON.stringify({ error: refusal });
      // A resumed turn that dies after this does not ask the hook again for the same call.
      resumed?.record?.(call.id, content);
      added.push({ role: "tool", tool_call_id: call.id, content });
      continue;
    }
    resumed?.record?.(call.id, null);
    request.onTool?.({ type: "tool.started", tool: name, call_id: call.id });
    const started = Date.now();
    const ran = await _runTool(tools, call, { signal, context }, request.toolFiles);
    // Cut before anything keeps it: the model, the transcript, a resumed turn's record.
    const result = { ...ran, content: cutToolResult(ran.content, request.toolResultMaxChars) };
    resumed?.record?.(call.id, result.content);
    request.onTool?.({
      type: "tool.completed",
      tool: name,
      call_id: call.id,
      duration_ms: Date.now() - started,
      ...(result.error !== undefined ? { error: result.error } : {}),
    });
    const files = ran.files?.length ? { files: ran.files } : {};
    added.push(
      { role: "tool", tool_call_id: call.id, content: result.content, ...files } as ChatMessage,
    );
  }
  return calls.filter((call) => clientNames.has(_callName(call)));
}

/** What the model is told for a call the deployment's `toolCall` hook denied, before its reason. */
export const HOOK_DENIED = "refused by the deployment: ";

/**
 * Asks the `toolCall` hook about a call of a known baton tool with valid arguments (one that
 * cannot run fails as it would anyway): its denial as the model is told it, or null to run it.
 */
async function _toolCallRefusal(
  request: TurnRequest,
  call: ToolCall,
  context: SessionContext,
): Promise<string | null> {
  if (!request.hooks?.toolCall || call.type !== "function") return null;
  const tool = request.tools.get(call.function.name);
  const args = tool ? _parseArgs(call.function.arguments) : null;
  if (!tool || !args) return null;
  const seq = Number(frameLogFields().seq ?? 0);
  const verdict = await callHook(request, "toolCall", {
    ...hookContext(context, Number.isSafeInteger(seq) ? seq : 0),
    tool: tool.name,
    call_id: call.id,
    arguments: args,
  });
  const deny = verdict && typeof verdict === "object" ? verdict.deny : undefined;
  return typeof deny === "string" ? HOOK_DENIED + deny : null;
}

/** The calls of a step that must wait for approval (a call that cannot run never asks: it fails). */
export function askingCalls(request: TurnRequest, calls: ToolCall[]): PendingCall[] {
  if (!request.asks) return [];
  return calls.flatMap((call) => {
    if (call.type !== "function") return [];
    const tool = request.tools.get(call.function.name);
    const args = tool ? _parseArgs(call.function.arguments) : null;
    if (!tool || !args || !request.asks!(tool, args)) return [];
    return [{ call_id: call.id, tool: tool.name, arguments: call.function.arguments || "{}" }];
  });
}

function _parseArgs(text: string): Record<string, unknown> | null {
  try {
    const args = text ? JSON.parse(text) : {};
    return args && typeof args === "object" && !Array.isArray(args) ? args : null;
  } catch {
    return null;
  }
}

function _callName(call: ToolCall): string {
  return call.type === "function" ? call.function.name : "";
}

async function _runTool(
  tools: ToolRegistry,
  call: ToolCall,
  options: ToolRunOptions,
  fileStore?: ToolFileStore,
): Promise<{ content: string; error?: string; files?: AttachedFile[] }> {
  const { signal } = options;
  const fail = (error: string) => ({ content: JSON.stringify({ error }), error });
  if (call.type !== "function") return fail("unsupported tool call type");
  const tool = tools.get(call.function.name);
  if (!tool) return fail(`unknown tool: ${call.function.name}`);
  let args: unknown;
  try {
    args = call.function.arguments ? JSON.parse(call.function.arguments) : {};
  } catch {
    return fail("tool arguments are not valid JSON");
  }
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    return fail("tool arguments must be a JSON object");
  }
  try {
    const result = await tool.run(args as Record<string, unknown>, options);
    const withFiles = toolResultFiles(result);
    if (withFiles) return await storeToolFiles(withFiles, fileStore, signal);
    return { content: typeof result === "string" ? result : JSON.stringify(result ?? null) };
  } catch (error) {
    signal.throwIfAborted();
    return fail(error instanceof Error ? error.message : String(error));
  }
}
