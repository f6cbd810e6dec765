// Writes the README's configuration reference from the settings table (`npm run docs:settings`); Deno.
import { renderSettingsSections, settingsSections } from "../lib/deployment/settings_doc.ts";

const _README = new URL("../README.md", import.meta.url);

/** Formats Markdown as `deno fmt` formats the README (the repo's deno.json: line width 100). */
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
 * The README with its marked settings sections generated and formatted; the rest of the file is
 * left as it is (formatting it is `deno fmt`'s job, and other people's text is not ours to touch).
 */
export async function generatedReadme(readme: string): Promise<string> {
  const fresh = settingsSections(renderSettingsSections(readme));
  const formatted = await Promise.all(fresh.map(async (s) => (await formatMarkdown(s)).trimEnd()));
  const old = settingsSections(readme);
  let out = readme;
  old.forEach((section, i) => out = out.replace(section, () => formatted[i]));
  return out;
}

if (import.meta.main) {
  const before = await Deno.readTextFile(_README);
  const after = await generatedReadme(before);
  if (after !== before) await Deno.writeTextFile(_README, after);
  console.log(after === before ? "README.md: settings up to date" : "README.md: settings written");
}
