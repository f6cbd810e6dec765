// Who may talk to the bot on the chat platforms: the settings, the sender a platform names, and the decision that costs no I/O; runtime-neutral.
import type { Sender } from "../chat/mod.ts";

/** `ACCESS_POLICY`: pairing codes for unknown direct senders (default), a closed list, or anyone. */
export type AccessMode = "pairing" | "allowlist" | "open";

/** The deployment's access settings. */
export interface AccessConfig {
  mode: AccessMode;
  /** `ALLOWED_USERS` entries as `platform:user` (GitHub logins lower-cased), and `platform:*`. */
  allowed: ReadonlySet<string>;
  /** `ADMIN_USERS`: allowed, and may approve pairing codes from chat with `/pair CODE`. */
  admins: ReadonlySet<string>;
  /** GitHub `author_association` values allowed without a list entry (`GITHUB_ALLOWED_ASSOCIATIONS`). */
  githubAssociations: ReadonlySet<string>;
  /** `GITHUB_REFUSAL=comment`: one short refusal comment per issue to unknown authors (default: silence). */
  githubRefusalComment: boolean;
  /** Turns each platform user may start per hour across their sessions (`USER_TURNS_PER_HOUR`); null: unlimited. */
  userTurnsPerHour: number | null;
  /**
   * Pairing codes waiting for the owner, at most, per platform (`MAX_PENDING_PAIRINGS`, default
   * 50): a stranger beyond them gets no code until some are approved or expire.
   */
  maxPendingPairings: number;
}

/** What the settings alone say about a sender, before any lookup. */
export type AccessVerdict =
  /** Listed, admin, trusted by association, or the policy is open: no lookup. */
  | { kind: "allowed"; admin: boolean }
  /** Not listed: allowed only if paired (one lookup of the sender's record). */
  | { kind: "unlisted" };

/** What an unlisted, unpaired sender gets. */
export type Refusal =
  /** A pairing code in their direct chat (at most one code message per hour). */
  | "pairing"
  /** "This bot is private", in their direct chat at most once per day. */
  | "private"
  /** One short refusal comment per GitHub issue. */
  | "comment"
  /** Nothing: acknowledged, nothing sent. */
  | "silence";

/** The access settings as read (lib/deployment/config.ts reads them through the settings table). */
export interface AccessSettings {
  mode: AccessMode;
  /** `ALLOWED_USERS`: `platform:user` entries (and `platform:*`); malformed ones are dropped. */
  allowed: readonly string[];
  /** `ADMIN_USERS`: `platform:user` entries. */
  admins: readonly string[];
  /** `GITHUB_ALLOWED_ASSOCIATIONS`, in any case. */
  githubAssociations: readonly string[];
  /** `GITHUB_REFUSAL`. */
  githubRefusal: "silence" | "comment";
  userTurnsPerHour: number | null;
  maxPendingPairings: number;
}

/**
 * The access config of the settings: entries normalised as senders are named (`senderEntry`:
 * platform lower-cased, GitHub logins without case), admins allowed too.
 */
export function accessConfig(settings: AccessSettings): AccessConfig {
  const admins = _entries(settings.admins);
  return {
    mode: settings.mode,
    allowed: new Set([..._entries(settings.allowed), ...admins]),
    admins: new Set(admins),
    githubAssociations: new Set(settings.githubAssociations.map((a) => a.toUpperCase())),
    githubRefusalComment: settings.githubRefusal === "comment",
    userTurnsPerHour: settings.userTurnsPerHour,
    maxPendingPairings: settings.maxPendingPairings,
  };
}

/** The `platform:user` entry naming a sender, as `ALLOWED_USERS` writes it. */
export function senderEntry(sender: Pick<Sender, "platform" | "user">): string {
  return _entry(sender.platform, sender.user);
}

/**
 * What the settings say about `sender` without any I/O. The generic webhook is trusted by its
 * signature unless `ALLOWED_USERS` lists generic users, and then only those (or `generic:*`).
 */
export function accessVerdict(config: AccessConfig, sender: Sender): AccessVerdict {
  const entry = senderEntry(sender);
  if (config.admins.has(entry)) return { kind: "allowed", admin: true };
  if (config.mode === "open" || config.allowed.has(entry)) return { kind: "allowed", admin: false };
  if (config.allowed.has(`${sender.platform}:*`)) return { kind: "allowed", admin: false };
  if (sender.platform === "generic") {
    const listsGeneric = [...config.allowed].some((e) => e.startsWith("generic:"));
    return listsGeneric ? { kind: "unlisted" } : { kind: "allowed", admin: false };
  }
  if (
    sender.platform === "github" && sender.association !== undefined &&
    config.githubAssociations.has(sender.association.toUpperCase())
  ) {
    return { kind: "allowed", admin: false };
  }
  return { kind: "unlisted" };
}

/** What an unlisted sender who is not paired gets: codes and notices only where the chat is private. */
export function refusalFor(config: AccessConfig, sender: Sender): Refusal {
  if (sender.platform === "github") return config.githubRefusalComment ? "comment" : "silence";
  if (!sender.direct || sender.platform === "generic") return "silence";
  return config.mode === "pairing" ? "pairing" : "private";
}

/** Whether an unlisted sender may pair at all (the generic webhook and GitHub never do). */
export function mayPair(config: AccessConfig, sender: Sender): boolean {
  return refusalFor(config, sender) === "pairing";
}

// `platform:user`, GitHub logins and email addresses compared without case.
function _entry(platform: string, user: string): string {
  const p = platform.trim().toLowerCase();
  const u = user.trim();
  return `${p}:${p === "github" || p === "email" ? u.toLowerCase() : u}`;
}

function _entries(list: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of list) {
    const colon = raw.indexOf(":");
    if (colon <= 0 || colon === raw.length - 1) continue;
    out.push(_entry(raw.slice(0, colon), raw.slice(colon + 1)));
  }
  return out;
}
