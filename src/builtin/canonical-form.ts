import { braceExpansion, isBraceExpansion } from "./brace-expansion.js";
import { commandName, type Item } from "./shell-structure.js";
import { MAX_COMMAND_CHARS, REDIRECTIONS } from "./shell-tokens.js";
import {
  blockDeviceName,
  CD_VOCABULARY,
  COMMAND_VOCABULARY,
  isWildcard,
  PATH_VOCABULARY,
  wildcardNames,
} from "./wildcards.js";

// The canonical form of a command line for `execute_bash`'s command guard: what runs, as the deny
// rules should read it — redirections dropped, brace expansions expanded, wildcard path parts read
// as the names they could match. Bounded at twice the longest command.

/**
 * The layer as the rules should read it: its words (quotes removed) and control operators, without
 * redirections (`rm 2>&1 -rf x` is `rm -rf x`); a brace expansion's braces and commas as blanks
 * (`{rm,-rf,x}` is `rm -rf x`); and each wildcard part of a path (between slashes) that could
 * match a name the rules look for replaced by those names: `environ`, `mem` and `proc` in any
 * word, quoted or not (`[e]nviron`, `find -name 'e*'`), and after a command that runs another,
 * every command name of the rules (`timeout 5 /bin/kil? 1` is `… /bin/kill 1`). A part of only
 * `*` and `?` with at least one `*` matches anything and is kept. `undefined` when the form grows
 * longer than {@link MAX_CANONICAL_CHARS} (`timeout 1 [a-z]* …`: each word could be any name).
 */
export function canonicalForm(items: readonly Item[]): string | undefined {
  const parts: string[] = [];
  let length = 0;
  // Where the words of a cd or pushd stand: its options, then its target.
  let changesDirectory = false;
  for (const { token, role, wrapped } of items) {
    if (token.kind === "operator") {
      // `&>` is a redirection for bash (`chmod &>x 4777 x`); structureOf kept it for dash.
      if (!REDIRECTIONS.has(token.text)) parts.push(token.text === "\n" ? ";" : token.text);
      changesDirectory = false;
      continue;
    }
    let target = false;
    if (role === "command") {
      const name = commandName(token.text);
      changesDirectory = name === "cd" || name === "pushd";
    } else if (changesDirectory && !/^-[LPe@]+$|^--$/.test(token.text)) {
      target = true;
      changesDirectory = false;
    }
    const words = token.expands && isBraceExpansion(token.text) ? braceExpansion(token.text) : [token.text];
    for (let word of words) {
      if (/[*?[]/.test(word) && role !== "command") {
        const read: string[] = [];
        for (const part of word.split("/")) {
          if (!isWildcard(part)) read.push(part);
          else if (isDevDirectory(read)) {
            // A part below /dev that could name a block device reads as one (`/dev/sd?`, `/dev/*`),
            // below a /dev spelled otherwise too (`/*/sd?` reads `/dev/sda`).
            read.splice(0, read.length, "", "dev");
            read.push(blockDeviceName(part) ?? part);
          } else {
            // Where a cd goes cannot be seen: any part that could be `proc` or `dev` is (`cd /*\/self`).
            const names = target
              ? wildcardNames(part, CD_VOCABULARY, true)
              : wildcardNames(part, wrapped && token.expands ? COMMAND_VOCABULARY : PATH_VOCABULARY);
            read.push(names.length > 0 ? names.join(" ") : part);
          }
        }
        word = read.join("/");
      }
      length += word.length + 1;
      if (length > MAX_CANONICAL_CHARS) return undefined;
      parts.push(word);
    }
  }
  return parts.join(" ");
}

const DEV: readonly string[] = ["dev"];

/**
 * Whether the path parts read so far (wildcard parts replaced by the names they could be) name
 * /dev, read lexically: `/dev`, `//dev/`, `/./dev`, `/tmp/../dev`, `/d?v`, `/*`; not a relative
 * `dev` (`config/dev/*.json`), which the literal rule does not read as /dev either.
 */
function isDevDirectory(parts: readonly string[]): boolean {
  if (parts.length < 2 || parts[0] !== "") return false;
  const names: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") names.pop();
    else names.push(part);
  }
  const [name] = names;
  if (names.length !== 1 || name === undefined) return false;
  return name.split(" ").includes("dev") || (isWildcard(name) && wildcardNames(name, DEV, true).length > 0);
}

/** Longest {@link canonicalForm}: twice the longest command, so the rules stay as cheap as on the command. */
const MAX_CANONICAL_CHARS = 2 * MAX_COMMAND_CHARS;
