// The chaos run's fake model: echoes each marked message, with seeded 429s, 500s and stalls, slow and piecewise replies, approval questions, the flood's answers, summaries, token counts and a tool step before a steer; Deno.
import type { FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";
import { askingStep } from "./approvals.ts";
import { isSummaryCall, summaryStep, usageOf } from "./compaction.ts";
import { fileImages } from "./files_out.ts";
import { floodStep } from "./floods.ts";
import { observeMedia } from "./media.ts";
import type { ChaosFilesOut, ChaosMedia } from "./observation.ts";
import type { ChaosFlood } from "./observation.ts";
import { CHAOS_MARKER, type ChaosSession, isPlatformWay, modelReply } from "./plan.ts";
import { toolStepBeforeSteer, turnText } from "./steer.ts";

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
  media?: ChaosMedia;
  /** The markers of the messages sent as `/steer` (steer.ts): the message before each calls a tool first. */
  steers?: ReadonlySet<string>;
  /** The messages answered with a file of their own (files_out.ts). */
  filesOut?: ChaosFilesOut;
}): ChaosModel {
  const { flood, sessions, faults, modelFailRate, media, steers, filesOut } = run;
  const answered: boolean[] = [];
  const injected = { r429: 0, r500: 0, stall: 0 };
  const step = (req: FakeModelRequest): FakeModelStep => {
    // baton's compaction asks for a summary (compaction.ts): answered, slowly, never failed.
    if (isSummaryCall(req)) {
      answered.push(true);
      return summaryStep(req);
    }
    const floodAnswer = flood ? floodStep(flood, req) : null;
    if (floodAnswer) {
      answered.push(true);
      return floodAnswer;
    }
    if (media) observeMedia(media, req);
    // The message the turn answers: a steer taken mid-turn is the last user message, not it.
    const own = turnText(req);
    const match = CHAOS_MARKER.exec(own);
    const text = modelReply(own);
    // Token counts as a real model reports them: compaction measures a session by them.
    const usage = usageOf(req, text);
    const asking = match ? askingStep(req, sessions[Number(match[1])], Number(match[2])) : null;
    if (!match) {
      answered.push(true);
      return { kind: "text", text, usage };
    }
    const r = faults();
    const share = modelFailRate / 3;
    const slow = sessions[Number(match[1])]?.way === "chat" ? 150 + Math.floor(faults() * 400) : 0;
    answered.push(r >= 3 * share);
    if (r < share) return injected.r429++, { kind: "status", status: 429, retryAfter: "1" };
    if (r < 2 * share) return injected.r500++, { kind: "status", status: 500 };
    if (r < 3 * share) return injected.stall++, { kind: "hold" };
    if (asking) return asking;
    const beforeSteer = steers ? toolStepBeforeSteer(req, match, steers) : null;
    if (beforeSteer) return beforeSteer;
    // Chat streams answer slowly, so a client that drops its stream drops it mid-turn; every
    // eighth chat-platform reply is written over about 1.5 seconds, so its preview grows (drafts,
    // Discord's @original, a Slack message) and a kill can land mid-preview.
    const way = sessions[Number(match[1])]?.way;
    const file = fileImages(filesOut, match[0]);
    if (way && isPlatformWay(way) && Number(match[2]) % 8 === 1) {
      return { kind: "text", text, pieces: 6, pieceDelayMs: 250, usage, ...file };
    }
    return { kind: "text", text, usage, ...(slow ? { delayMs: slow } : {}), ...file };
  };
  return { step, answered, injected };
}
