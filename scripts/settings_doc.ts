// Writes docs/reference/settings.md's marked sections from the settings table (`npm run docs:settings`); Deno.
import { renderSettingsSections, settingsSections } from "../lib/deployment/settings_doc.ts";

/** The page the settings reference is generated into. */
export const SETTINGS_PAGE = new URL("../docs/reference/settings.md", import.meta.url);

/** Formats Markdown as `deno fmt` formats the docs (the repo's deno.json: line width 100). */
export async function formatMarkdown(text: string): Promise<string> {
  const command = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: new URL("..", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/**
 * `page` with its marked settings sections generated and formatted; the rest of the file is left as
 * it is (formatting it is `deno fmt`'s job, and the prose around the sections is written by hand).
 */
export async function generatedSettingsPage(page: string): Promise<string> {
  const fresh = settingsSections(renderSettingsSections(page));
  const formatted = await Promise.all(fresh.map(async (s) => (await formatMarkdown(s)).trimEnd()));
  const old = settingsSections(page);
  let out = page;
  old.forEach((section, i) => out = out.replace(section, () => formatted[i]));
  return out;
}

if (import.meta.main) {
  const before = await Deno.readTextFile(SETTINGS_PAGE);
  const after = await generatedSettingsPage(before);
  if (after !== before) await Deno.writeTextFile(SETTINGS_PAGE, after);
  console.log(
    `docs/reference/settings.md: settings ${after === before ? "up to date" : "written"}`,
  );
}
