// Which mails are never answered (bounces, auto-replies, mailing lists) and which fail the sender authentication Email Routing reports; runtime-neutral.
import type { InboundMail, MailHeader } from "./inbound_mail.ts";

/**
 * Why `mail` was written by a machine that must never be answered — a bounce or delivery report,
 * an auto-reply, a mailing list — or null for a person's mail. Answering any of them could start
 * two robots mailing each other for ever (RFC 3834).
 */
export function automatedReason(mail: InboundMail): string | null {
  const header = (name: string) => _first(mail.headers, name)?.trim().toLowerCase();
  if (!mail.returnPath) return "a bounce (empty return path)";
  const local = mail.from.split("@")[0];
  if (local === "mailer-daemon" || local === "postmaster") return `a bounce (from ${local})`;
  if (mail.contentType === "multipart/report") return "a delivery or read report";
  const auto = header("auto-submitted");
  if (auto !== undefined && auto !== "no") return `an automatic mail (Auto-Submitted: ${auto})`;
  const precedence = header("precedence");
  if (precedence === "bulk" || precedence === "junk" || precedence === "list") {
    return `a bulk mail (Precedence: ${precedence})`;
  }
  for (const name of ["x-autoreply", "x-autorespond", "x-auto-response-suppress"]) {
    const value = header(name);
    if (value !== undefined && !(name === "x-auto-response-suppress" && value === "none")) {
      return `an automatic reply (${name})`;
    }
  }
  if (header("list-id") !== undefined || header("list-unsubscribe") !== undefined) {
    return "a mailing list's mail";
  }
  return null;
}

/**
 * Why `mail`'s sender is not proven to be its `From:` address, or null when it is: the topmost
 * `Authentication-Results` (the one Email Routing adds as it receives the mail; any lower one
 * could be the sender's own) must show `dmarc=pass`, or — where the domain publishes no DMARC —
 * `dkim=pass` for the From domain, or `spf=pass` for it (there, or in `Received-SPF`). A
 * `dmarc=fail` is refused whatever else passed.
 */
export function authProblem(mail: InboundMail): string | null {
  const domain = mail.from.slice(mail.from.lastIndexOf("@") + 1);
  const results = _first(mail.headers, "authentication-results");
  const spfHeader = _first(mail.headers, "received-spf");
  if (results === undefined && spfHeader === undefined) {
    return "no Authentication-Results or Received-SPF header (EMAIL_REQUIRE_AUTH=off to accept)";
  }
  const clauses = (results ?? "").split(";").slice(1).map((c) => c.trim().toLowerCase());
  const method = (name: string) =>
    clauses.filter((c) => c.startsWith(`${name}=`)).map((c) => ({
      result: c.slice(name.length + 1).split(/[\s(]/)[0],
      clause: c,
    }));
  const dmarc = method("dmarc");
  if (dmarc.some((r) => r.result === "fail")) return "DMARC failed";
  if (dmarc.some((r) => r.result === "pass")) return null;
  const aligned = (clause: string, property: string) => {
    const value = new RegExp(`\\b${property}=([^\\s;]+)`).exec(clause)?.[1] ?? "";
    return _aligned(value.slice(value.lastIndexOf("@") + 1), domain);
  };
  if (method("dkim").some((r) => r.result === "pass" && aligned(r.clause, "header\\.d"))) {
    return null;
  }
  if (method("spf").some((r) => r.result === "pass" && aligned(r.clause, "smtp\\.mailfrom"))) {
    return null;
  }
  const spf = (spfHeader ?? "").trim().toLowerCase();
  if (spf.startsWith("pass") && _aligned(mail.returnPath.split("@").pop() ?? "", domain)) {
    return null;
  }
  return `no passing DMARC, or SPF or DKIM for ${domain} (EMAIL_REQUIRE_AUTH=off to accept)`;
}

/** The first (topmost) value of header `name`. */
function _first(headers: readonly MailHeader[], name: string): string | undefined {
  return headers.find((h) => h.key === name)?.value;
}

// Relaxed alignment, as DMARC's: the same domain, or one a subdomain of the other.
function _aligned(a: string, b: string): boolean {
  a = a.toLowerCase();
  return a !== "" && (a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`));
}
