// Slack read-back: whether a message naming a reply part (by its metadata) reached a thread or DM; runtime-neutral (fetch).
import * as z from "zod";
import type { PlatformEnv } from "../chat/mod.ts";
import { apiRoot, jsonField, readJson } from "./_kit.ts";
import { SLACK_DEFAULT_API_ROOT, type SlackTarget } from "./slack_target.ts";

/** The metadata event type of every message baton posts; its payload's `part` names the part. */
export const PART_EVENT_TYPE = "baton_part";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
const _history = z.lazy(() =>
  z.looseObject({
    ok: z.literal(true),
    has_more: z.boolean().optional(),
    messages: z.array(z.looseObject({
      metadata: z.looseObject({ event_type: z.string(), event_payload: z.unknown() }).optional(),
    })),
  })
);

/**
 * Reads the thread (conversations.replies) or, for an unthreaded DM, the channel's history
 * (conversations.history) since `sinceMs`, with metadata, for a message naming `marker`. Needs
 * the history scopes of the conversation types the bot is in (see docs/platforms/slack.md).
 */
export async function findSlackPart(
  target: SlackTarget,
  marker: string,
  sinceMs: number,
  env: PlatformEnv,
): Promise<boolean | null> {
  const params = new URLSearchParams({
    channel: target.channel,
    oldest: (Math.max(0, sinceMs) / 1000).toFixed(6),
    include_all_metadata: "true",
    limit: "200",
  });
  if (target.thread_ts) params.set("ts", target.thread_ts);
  const method = target.thread_ts ? "conversations.replies" : "conversations.history";
  const url = `${apiRoot(env, "SLACK_API_ROOT", SLACK_DEFAULT_API_ROOT)}/${method}?${params}`;
  const body = await readJson(url, {
    headers: { authorization: `Bearer ${env.SLACK_BOT_TOKEN ?? ""}` },
  });
  const page = _history.safeParse(body);
  if (!page.success) return null;
  const found = page.data.messages.some((m) =>
    m.metadata?.event_type === PART_EVENT_TYPE &&
    jsonField(m.metadata.event_payload, "part") === marker
  );
  // Not on the one page read while more exist: cannot say it is absent.
  return found ? true : page.data.has_more ? null : false;
}
