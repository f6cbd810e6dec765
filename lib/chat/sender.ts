// Who sent a chat message, as a platform adapter names them: the chat vocabulary that access control decides on; runtime-neutral.

/** Who sent a platform message, as the adapter saw it. */
export interface Sender {
  /** The adapter's name (`telegram`, `slack`, …) or `generic` for the signed webhook. */
  platform: string;
  /** The platform's user id: `123456`, `T0123/U0456`, a Discord snowflake, a GitHub login. */
  user: string;
  /** A display name, for the pairing list; never used to decide. */
  name: string;
  /** A private channel between the sender and the bot (pairing codes are only ever sent there). */
  direct: boolean;
  /** GitHub's `author_association` of the comment (OWNER, MEMBER, COLLABORATOR, …). */
  association?: string;
}
