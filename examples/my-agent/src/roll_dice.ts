// The example's own tool: roll_dice, {sides} → a whole number from 1 to sides; any runtime.
import { defineTool } from "baton/tools";

/** The most sides a die may have. */
export const MAX_SIDES = 1_000_000;

/**
 * Rolls one fair die with `sides` sides (a whole number from 2 to 1,000,000). A call outside
 * those bounds throws: the model is told why and may try again.
 */
export const rollDice = defineTool<{ sides: number }>({
  name: "roll_dice",
  description:
    "Rolls a fair die with the given number of sides and returns the result (1 to sides).",
  parameters: {
    type: "object",
    properties: {
      sides: {
        type: "integer",
        minimum: 2,
        maximum: MAX_SIDES,
        description: "How many sides the die has, e.g. 6 or 20.",
      },
    },
    required: ["sides"],
    additionalProperties: false,
  },
  run({ sides }) {
    // The schema asks the model for this, but nothing makes it obey: checked again here.
    if (typeof sides !== "number" || !Number.isInteger(sides) || sides < 2 || sides > MAX_SIDES) {
      throw new RangeError(`sides must be a whole number from 2 to ${MAX_SIDES}, got ${sides}`);
    }
    return { sides, roll: _uniform(sides) };
  },
});

/** A uniform whole number from 1 to `n` (rejection sampling: no modulo bias). */
function _uniform(n: number): number {
  const limit = 2 ** 32 - (2 ** 32 % n);
  const word = new Uint32Array(1);
  do crypto.getRandomValues(word); while (word[0] >= limit);
  return 1 + (word[0] % n);
}
