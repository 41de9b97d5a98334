// Fenced code blocks of a Markdown file, for the scripts that check the docs (check-doc-blocks.mjs)
// and run the README's example (check-package.mjs).

/**
 * Every fenced code block (``` or ~~~) of a Markdown text, in order.
 * @param {string} markdown
 * @returns {{ info: string, language: string, attributes: string[], code: string, line: number }[]}
 *   `line` is the 1-based line of the opening fence; `language` the first word of the info string.
 */
export function codeBlocks(markdown) {
  const lines = markdown.split(/\r?\n/);
  const blocks = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(lines[index]);
    if (open === null) continue;
    const [, fence, rest] = open;
    const info = rest.trim();
    const body = [];
    let end = index + 1;
    // A closing fence: the same character, at least as long, nothing after it.
    const close = new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`);
    while (end < lines.length && !close.test(lines[end])) body.push(lines[end++]);
    const [language = "", ...attributes] = info.split(/\s+/).filter(Boolean);
    blocks.push({ info, language, attributes, code: body.length > 0 ? `${body.join("\n")}\n` : "", line: index + 1 });
    index = end;
  }
  return blocks;
}

/**
 * The text of the `## heading` section (up to the next `## ` heading), or throws if there is none.
 * @param {string} markdown
 * @param {string} heading
 */
export function section(markdown, heading) {
  const start = markdown.search(new RegExp(`^## ${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`, "m"));
  if (start === -1) throw new Error(`no "## ${heading}" section`);
  const next = markdown.slice(start + 3).search(/^## /m);
  return next === -1 ? markdown.slice(start) : markdown.slice(start, start + 3 + next);
}
