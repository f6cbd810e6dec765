// Where a Slack reply goes (channel, thread) and the Web API root: the ground the Slack adapter's files share; runtime-neutral.
import * as z from "zod";

/** Slack's Web API root, unless `SLACK_API_ROOT` says otherwise. */
export const SLACK_DEFAULT_API_ROOT = "https://slack.com/api";

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
/** A Slack id (channel, user, team): what the adapter accepts from a payload. */
export const slackId = z.lazy(() => z.string().regex(/^[A-Za-z0-9_-]{1,64}$/));

/** A Slack message timestamp (`ts`, `thread_ts`): a message's id within its channel. */
export const slackTs = z.lazy(() => z.string().regex(/^[0-9]{1,20}\.[0-9]{1,12}$/));

/** Where a Slack reply goes: the channel, and the thread for threaded conversations. */
export const slackTarget = z.lazy(() =>
  z.object({
    platform: z.literal("slack"),
    channel: slackId,
    thread_ts: slackTs.optional(),
  })
);

/** A Slack reply target, as stored with the message. */
export type SlackTarget = z.infer<typeof slackTarget>;
