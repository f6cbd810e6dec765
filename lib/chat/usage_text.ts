// The reply to /usage: this chat's and this user's tokens today and yesterday (UTC), with their cost where MODEL_PRICES is set; runtime-neutral.

/** One day's figures of a session or a user, as their stores keep them. */
export interface UsageFigures {
  day: string;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  total_tokens: number;
  cost: number;
  turns: number;
}

/** What `/usage` reports: today then yesterday, for the chat and (where known) its user. */
export interface UsageReport {
  /** This chat's session: [today, yesterday]. */
  session: [UsageFigures, UsageFigures];
  /** The sender across all their chats: [today, yesterday]; null where there is no user record. */
  user: [UsageFigures, UsageFigures] | null;
  /** `MODEL_PRICES` is set: show money too. */
  priced: boolean;
  /** `USER_TOKENS_PER_DAY`, shown against the user's today; null: none. */
  userCap: number | null;
}

/** The reply to /usage. */
export function usageText(report: UsageReport): string {
  const lines = ["Usage (UTC days):"];
  const labels = ["Today", "Yesterday"];
  for (const i of [0, 1]) {
    const chat = report.session[i];
    lines.push(`${labels[i]} (${chat.day}):`);
    lines.push(`  this chat: ${_figures(chat, report.priced)}`);
    const user = report.user?.[i];
    if (user) {
      const cap = i === 0 && report.userCap !== null ? ` (limit ${_n(report.userCap)} a day)` : "";
      lines.push(`  you, all chats: ${_figures(user, report.priced)}${cap}`);
    }
  }
  return lines.join("\n");
}

function _figures(f: UsageFigures, priced: boolean): string {
  const turns = `${_n(f.turns)} turn${f.turns === 1 ? "" : "s"}`;
  const cached = f.cached_tokens ? `, ${_n(f.cached_tokens)} cached` : "";
  const money = priced ? `, cost ${_money(f.cost)}` : "";
  return `${_n(f.total_tokens)} tokens (${_n(f.prompt_tokens)} in${cached}, ` +
    `${_n(f.completion_tokens)} out), ${turns}${money}`;
}

function _n(n: number): string {
  return n.toLocaleString("en-US");
}

/** Money as MODEL_PRICES' currency: four decimals, more for amounts under a hundredth. */
function _money(cost: number): string {
  return cost > 0 && cost < 0.01 ? cost.toFixed(6) : cost.toFixed(4);
}
