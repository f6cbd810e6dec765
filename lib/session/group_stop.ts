// Who may /stop or /new a turn in a group chat (`GROUP_STOP`): the turn's sender or an admin, or any member; runtime-neutral.

/**
 * `GROUP_STOP`: in a chat shared by several members, `sender` (the default) lets only the running
 * turn's sender or an admin (`ADMIN_USERS`) stop it with /stop, /new or /reset; `anyone` lets
 * every member, as in a 1:1 chat.
 */
export type GroupStop = "sender" | "anyone";

/** Every `GROUP_STOP` value, the default first. */
export const GROUP_STOP_MODES: readonly GroupStop[] = ["sender", "anyone"];

/**
 * Whether a /stop, /new or /reset may end the running turn. Always in a 1:1 chat, over the API
 * and while nothing runs (there is no one else's turn to end); in a group under `sender`, only
 * from the user whose message started the turn (`turnSender`) or an admin.
 */
export function mayStopTurn(
  mode: GroupStop,
  command: { group: boolean; userId: string; admin: boolean },
  turnSender: string | null,
): boolean {
  if (!command.group || mode === "anyone" || command.admin || turnSender === null) return true;
  return command.userId !== "" && command.userId === turnSender;
}
