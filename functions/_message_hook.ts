// The messageReceived hook on the Worker's inbound paths (webhooks, the OpenAI pipeline): asked before a message is stored, may drop it; Workers.
import type { Context } from "hono";
import { callHook, dropsMessage, hookContext } from "../lib/agent/mod.ts";
import type { InboundMessage } from "../lib/session/mod.ts";
import type { App } from "./_http.ts";

/**
 * Whether the deployment's `messageReceived` hook drops `message` (from `source`: a platform's
 * name, or "api"). Asked before anything is stored, within `HOOK_TIMEOUT_MS`; a hook that throws
 * or hangs keeps the message (logged), so a broken hook never loses one.
 */
export async function messageDropped(
  c: Context<App>,
  message: InboundMessage,
  source: string,
): Promise<boolean> {
  const { hooks } = c.var.deployment;
  if (!hooks?.messageReceived) return false;
  const verdict = await callHook(
    { hooks, hookTimeoutMs: c.var.config.hookTimeoutMs },
    "messageReceived",
    { ...hookContext(message.context, 0), source, text: message.text },
  );
  return dropsMessage(verdict);
}

/** The API's answer to a dropped message: 422 `message_dropped`, and no turn started. */
export const DROPPED_MESSAGE = "the deployment's messageReceived hook dropped this message";
