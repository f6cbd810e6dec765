// WhatsApp's interactive messages for baton's choices: reply buttons or a list out, the tapped id back; runtime-neutral.
import * as z from "zod";
import type { Choice } from "../chat/mod.ts";

/** Reply buttons: at most three, titles of at most 20 characters, a body of at most 1,024. */
const _MAX_BUTTONS = 3;
const _BUTTON_TITLE_CHARS = 20;
const _BUTTON_BODY_CHARS = 1024;
/** List messages: at most ten rows, row titles of at most 24 characters (the body: 4,096). */
const _MAX_ROWS = 10;
const _ROW_TITLE_CHARS = 24;

/**
 * A question's choices as WhatsApp shows them: reply buttons where they fit (three at most, a body
 * of at most 1,024 characters), else a list message, whose button opens the choices as rows (an
 * approval's four). Either way a tap comes back as an `interactive` message carrying the id.
 */
export function whatsappInteractive(text: string, choices: readonly Choice[]) {
  if (choices.length <= _MAX_BUTTONS && [...text].length <= _BUTTON_BODY_CHARS) {
    return {
      type: "button",
      body: { text },
      action: {
        buttons: choices.map((c) => ({
          type: "reply",
          reply: { id: c.data, title: _cut(c.label, _BUTTON_TITLE_CHARS) },
        })),
      },
    };
  }
  return {
    type: "list",
    body: { text },
    action: {
      button: "Choose",
      sections: [{
        title: "Choices",
        rows: choices.slice(0, _MAX_ROWS).map((c) => ({
          id: c.data,
          title: _cut(c.label, _ROW_TITLE_CHARS),
        })),
      }],
    },
  };
}

/** `text` cut to `max` characters (code points, as WhatsApp counts them). */
function _cut(text: string, max: number): string {
  return [...text].slice(0, max).join("");
}

// Schemas are built on their first parse (`z.lazy`): a Worker's start-up builds none of them.
/** An inbound `interactive` message's tap: a reply button (`button_reply`) or a list row (`list_reply`). */
const _tap = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    button_reply: z.looseObject({ id: z.string() }).optional(),
    list_reply: z.looseObject({ id: z.string() }).optional(),
  })
);

/** The id of the button or row an inbound `interactive` object names, or undefined. */
export function whatsappTapData(interactive: unknown): string | undefined {
  const tap = _tap.safeParse(interactive);
  if (!tap.success) return undefined;
  if (tap.data.type === "button_reply") return tap.data.button_reply?.id;
  if (tap.data.type === "list_reply") return tap.data.list_reply?.id;
  return undefined;
}
