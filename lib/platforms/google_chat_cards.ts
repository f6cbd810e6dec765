// Google Chat's approval buttons: the card under a question, what a click invokes, and the click's private answer; runtime-neutral.
import type { Choice, PlatformChoice } from "../platform.ts";
import type { GoogleChatTarget } from "./google_chat.ts";

/**
 * What a button of baton's invokes: the function (for an HTTP app, a name the app reads back) and
 * the parameter that holds the choice's data.
 */
export const GOOGLE_CHAT_CHOICE = { function: "baton_choice", parameter: "choice" } as const;

/**
 * A card under the part's text with one button per choice, each invoking `GOOGLE_CHAT_CHOICE.function` with the
 * choice's data; the text stays the message's own (`text`), so notifications show it.
 */
export function googleChatCards(choices: readonly Choice[]): unknown[] {
  return [{
    cardId: "baton-choices",
    card: {
      sections: [{
        widgets: [{
          buttonList: {
            buttons: choices.map((choice) => ({
              text: choice.label,
              ...(choice.style === "primary" ? { type: "FILLED" } : {}),
              onClick: {
                action: {
                  function: GOOGLE_CHAT_CHOICE.function,
                  parameters: [{ key: GOOGLE_CHAT_CHOICE.parameter, value: choice.data }],
                },
              },
            })),
          },
        }],
      }],
    },
  }];
}

/**
 * Answers a judged click in the webhook's own answer, which Chat requires for a click: a new
 * message (`actionResponse` `NEW_MESSAGE`) in the card's thread that, in a space, only the clicker
 * sees (`privateMessageViewer`, the way Chat's docs answer one user's interaction; a DM is theirs
 * alone already). Not `UPDATE_MESSAGE`: that rewrites the question for everyone, and "Not yours"
 * must leave it as it is for whom it is.
 */
export function answerGoogleChatChoice(
  choice: PlatformChoice<GoogleChatTarget>,
  text: string,
): Promise<{ status: number; body: unknown }> {
  return Promise.resolve({
    status: 200,
    body: {
      actionResponse: { type: "NEW_MESSAGE" },
      text,
      ...(choice.sender.direct ? {} : { privateMessageViewer: { name: choice.sender.user } }),
    },
  });
}
