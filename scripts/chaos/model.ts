// The chaos run's fake model: echoes each marked message, with seeded 429s, 500s and stalls, slow and piecewise replies, approval questions and the flood's answers; Deno.
import type { FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";
import { askingStep } from "./approvals.ts";
import { floodStep } from "./floods.ts";
import type { ChaosFlood } from "./observation.ts";
import { CHAOS_MARKER, type ChaosSession, isPlatformWay, modelReply } from "./plan.ts";

/** The fake model's script for one run, and what it did: whether each call was answered, and the faults injected. */
export interface ChaosModel {
  step: (req: FakeModelRequest) => FakeModelStep;
  answered: boolean[];
  injected: { r429: number; r500: number; stall: number };
}

/**
 * The script: `faults` is the run's seeded stream of fault draws (shared with the senders, so a
 * seed draws as it did when the script lived in the run), `modelFailRate` the share that fail.
 */
export function chaosModel(run: {
  flood: ChaosFlood | undefined;
  sessions: ChaosSession[];
  faults: () => number;
  modelFailRate: number;
}): ChaosModel {
  const { flood, sessions, faults, modelFailRate } = run;
  const answered: boolean[] = [];
  const injected = { r429: 0, r500: 0, stall: 0 };
  const step = (req: FakeModelRequest): FakeModelStep => {
    const floodAnswer = flood ? floodStep(flood, req) : null;
    if (floodAnswer) {
      answered.push(true);
      return floodAnswer;
    }
    const match = CHAOS_MARKER.exec(req.lastUserText);
    const text = modelReply(req.lastUserText);
    const asking = match ? askingStep(req, sessions[Number(match[1])], Number(match[2])) : null;
    if (!match) {
      answered.push(true);
      return { kind: "text", text };
    }
    const r = faults();
    const share = modelFailRate / 3;
    const slow = sessions[Number(match[1])]?.way === "chat" ? 150 + Math.floor(faults() * 400) : 0;
    answered.push(r >= 3 * share);
    if (r < share) return injected.r429++, { kind: "status", status: 429, retryAfter: "1" };
    if (r < 2 * share) return injected.r500++, { kind: "status", status: 500 };
    if (r < 3 * share) return injected.stall++, { kind: "hold" };
    if (asking) return asking;
    // Chat streams answer slowly, so a client that drops its stream drops it mid-turn; every
    // eighth chat-platform reply is written over about 1.5 seconds, so its preview grows (drafts,
    // Discord's @original, a Slack message) and a kill can land mid-preview.
    const way = sessions[Number(match[1])]?.way;
    if (way && isPlatformWay(way) && Number(match[2]) % 8 === 1) {
      return { kind: "text", text, pieces: 6, pieceDelayMs: 250 };
    }
    return { kind: "text", text, ...(slow ? { delayMs: slow } : {}) };
  };
  return { step, answered, injected };
}
