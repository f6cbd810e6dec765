// Google Chat's approval buttons: the card under a question, what a click invokes, and the click's private answer (as a Chat API app's message or in a Workspace add-on's envelope); runtime-neutral.
import {
  approvalClickText,
  type Choice,
  type ClickAnswer,
  type PlatformChoice,
} from "../chat/mod.ts";

/**
 * What a button of baton's invokes: the function (for an HTTP app, a name the app reads back) and
 * the parameter that holds the choice's data.
 */
export const GOOGLE_CHAT_CHOICE = { function: "baton_choice", parameter: "choice" } as const;

/** The `handle` of a click that came as a Workspace add-on's event: it is answered as an add-on. */
export const GOOGLE_CHAT_ADD_ON = "add-on";

/**
 * A card under the part's text with one button per choice, each invoking `fn` (by default
 * `GOOGLE_CHAT_CHOICE.function`; an add-on's endpoint URL for an app built as a Workspace add-on)
 * with the choice's data; the text stays the message's own (`text`), so notifications show it.
 */
export function googleChatCards(
  choices: readonly Choice[],
  fn: string = GOOGLE_CHAT_CHOICE.function,
): unknown[] {
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
                  function: fn,
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
 * must leave it as it is for whom it is. A click that came as a Workspace add-on's event is
 * answered in the add-on's envelope, the same message as
 * `hostAppDataAction.chatDataAction.createMessageAction.message` (the add-ons endpoint
 * interface's DataActions; Google's add-on samples answer clicks so:
 * googleworkspace/add-ons-samples node/chat/contact-form-app); an add-on has no `actionResponse`.
 */
export function answerGoogleChatChoice(
  choice: Pick<PlatformChoice, "sender" | "handle">,
  answer: ClickAnswer,
): Promise<{ status: number; body: unknown }> {
  const text = approvalClickText(answer);
  const viewer = choice.sender.direct ? {} : { privateMessageViewer: { name: choice.sender.user } };
  if (choice.handle === GOOGLE_CHAT_ADD_ON) {
    return Promise.resolve({
      status: 200,
      body: {
        hostAppDataAction: {
          chatDataAction: { createMessageAction: { message: { text, ...viewer } } },
        },
      },
    });
  }
  return Promise.resolve({
    status: 200,
    body: { actionResponse: { type: "NEW_MESSAGE" }, text, ...viewer },
  });
}
