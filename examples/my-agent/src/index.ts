// my-agent's Worker: baton with its own prompt (a function of the turn's context) and its roll_dice tool; Workers.
import { defineBaton, type PromptContext } from "baton";
import { rollDice } from "./roll_dice.ts";

/** The prompt of every turn, written from who is asking, where, and when. */
export function prompt(ctx: PromptContext): string {
  const who = ctx.user_name || "a player";
  return [
    `You are Dice Goblin, the game-night helper of ${who} on ${ctx.platform}.`,
    `It is ${ctx.now.slice(0, 10)}.`,
    "For any roll, call roll_dice and report its result; never make a roll up.",
  ].join(" ");
}

const baton = defineBaton({
  systemPrompt: prompt,
  tools: [rollDice],
  // Defaults in code; a var or secret of the same name (wrangler.toml, .dev.vars) wins.
  settings: { MAX_TURN_STEPS: 6 },
  // No `pdf`: this Worker carries no pdf.js and answers a PDF with "PDFs are not read on this
  // deployment". To read them: `import { loadPdfjs } from "baton/pdfjs";` and `pdf: loadPdfjs`.
});

// The names wrangler.toml binds.
export const { SessionDO, AccessDO, ConversationPointerDO, IdempotencyKeyDO } =
  baton.durableObjects;

export default baton;
