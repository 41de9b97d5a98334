import { EXTRACTORS } from "./archive-extraction.js";
import { DETACHERS, SHELL_NAMES, WRAPPER_NAMES } from "./deny-rules.js";

// Wildcards (`*`, `?`, `[…]`) as `execute_bash`'s command guard reads them: which of the names the
// rules look for (commands, /proc and /dev path parts, block devices) a wildcard could match.
// Bounded by the longest name; cached.

/** The path parts the /proc rules look for, and /dev (what a part below it could be is read then). */
export const PATH_VOCABULARY: readonly string[] = ["environ", "mem", "proc", "dev"];
/** What a cd target's wildcard part is read as when it could be one: the directories cd may not enter. */
export const CD_VOCABULARY: readonly string[] = ["proc", "dev"];

/** What the block-device rule looks for below /dev: the start of each name it refuses. */
const BLOCK_DEVICE_PREFIXES: readonly string[] = [
  ...["sd", "hd", "vd", "xvd"].flatMap((disk) => [..."abcdefghijklmnopqrstuvwxyz"].map((letter) => disk + letter)),
  ...["nvme", "mmcblk", "disk", "dm-", "loop", "md", "sr"].flatMap((kind) => [..."0123456789"].map((n) => kind + n)),
  "mapper",
];
const blockDeviceCache = new Map<string, string | undefined>();

/**
 * A block device name the rule refuses that the wildcard (one path part below /dev) could match
 * the start of (`sd?` → `sda`, `*` → `sda`), or `undefined`. Bounded like {@link wildcardNames};
 * cached.
 */
export function blockDeviceName(wildcard: string): string | undefined {
  if (blockDeviceCache.has(wildcard)) return blockDeviceCache.get(wildcard);
  const parts = compileWildcard(wildcard.toLowerCase());
  const name = parts === undefined ? undefined : BLOCK_DEVICE_PREFIXES.find((prefix) => matchesAStart(parts, prefix));
  if (blockDeviceCache.size >= MAX_CACHED) blockDeviceCache.clear();
  blockDeviceCache.set(wildcard, name);
  return name;
}

/**
 * Whether the compiled wildcard matches some name that starts with `prefix`: the parts, read as
 * far as `prefix` goes, can reach its end (what is left of the wildcard matches some rest).
 * Linear in the prefix times the parts.
 */
function matchesAStart(parts: readonly WildcardPart[], prefix: string): boolean {
  const closure = (states: Set<number>) => {
    for (const state of states) if (parts[state] === "*") states.add(state + 1);
    return states;
  };
  let states = closure(new Set([0]));
  for (let at = 0; at < prefix.length; at++) {
    const next = new Set<number>();
    for (const state of states) {
      const part = parts[state];
      if (part === "*") next.add(state);
      else if (part !== undefined && accepts(part, prefix.charCodeAt(at))) next.add(state + 1);
    }
    states = closure(next);
    if (states.size === 0) return false;
  }
  return true;
}
/** Every name the rules refuse or look at as a command, and the path parts. */
export const COMMAND_VOCABULARY: readonly string[] = [
  ...new Set([
    ...PATH_VOCABULARY,
    ...SHELL_NAMES,
    ...WRAPPER_NAMES,
    ...["rm", "mkfs", "mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "parted", "dd", "find", "shred"],
    ...["mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.exfat"],
    ...["sudo", "sudoedit", "su", "ksu", "doas", "pkexec", "run0", "shutdown", "reboot", "poweroff", "halt"],
    ...["xargs", "parallel", ...DETACHERS],
    ...["chmod", "chown", "kill", "pkill", "killall", "killall5", "skill", "setsid", "crontab", "systemd-run"],
    ...["docker", "podman", "git", "ssh", "scp", "sftp", "eval", "alias", "source", "trap", "function"],
    ...EXTRACTORS,
  ]),
];
const LONGEST_NAME = Math.max(...COMMAND_VOCABULARY.map((name) => name.length));

/** Whether a word (or a part of a path) holds a wildcard: `*`, `?`, or a `[` closed later. */
export function isWildcard(text: string): boolean {
  if (text.includes("*") || text.includes("?")) return true;
  const open = text.indexOf("[");
  return open !== -1 && text.indexOf("]", open + 1) !== -1;
}

/** A wildcard compiled: `*`, `?`, a literal character, or a bracket expression (accepted codes below 128; index 128: any other). */
type WildcardPart = "*" | "?" | { readonly char: string } | Uint8Array;

/** What each wildcard seen matched, per vocabulary; emptied when it grows large (it is only a cache). */
const wildcardCache = new Map<readonly string[], Map<string, string[]>>();
const MAX_CACHED = 1_000;

/**
 * The names of `vocabulary` that the wildcard (one path part, compared lower case) could match;
 * unless `anything`, none when it matches anything (only `*` and `?`, with a `*`: reading `ls *`
 * as naming every refused command would refuse it). Bounded: a wildcard with more literal parts
 * than the longest name matches none, and each name costs at most its length times the
 * wildcard's parts; results are cached per vocabulary.
 */
export function wildcardNames(wildcard: string, vocabulary: readonly string[], anything = false): string[] {
  let cache = wildcardCache.get(vocabulary);
  if (cache === undefined) {
    cache = new Map();
    wildcardCache.set(vocabulary, cache);
  }
  const key = anything ? `*${wildcard}` : wildcard;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const parts = compileWildcard(wildcard.toLowerCase());
  const matchesAnything = parts?.every((part) => part === "*" || part === "?") === true && parts.includes("*");
  const names =
    parts === undefined || (matchesAnything && !anything)
      ? []
      : vocabulary.filter((name) => wildcardMatches(parts, name));
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, names);
  return names;
}

/** The parts of a wildcard, runs of `*` as one; `undefined` when it has more non-`*` parts than {@link LONGEST_NAME}. Linear. */
function compileWildcard(wildcard: string): WildcardPart[] | undefined {
  const parts: WildcardPart[] = [];
  let fixed = 0;
  const lastClose = wildcard.lastIndexOf("]");
  for (let index = 0; index < wildcard.length; index++) {
    const char = wildcard.charAt(index);
    if (char === "*") {
      if (parts.at(-1) !== "*") parts.push("*");
      continue;
    }
    if (++fixed > LONGEST_NAME) return undefined;
    if (char === "?") parts.push("?");
    else if (char === "[" && lastClose > index + 1) {
      // A `]` right after `[` (or `[!`) is a member; the expression ends at the next `]`.
      let first = index + 1;
      if (wildcard.charAt(first) === "!" || wildcard.charAt(first) === "^") first++;
      const close = wildcard.indexOf("]", first + 1);
      if (close === -1) parts.push({ char });
      else {
        parts.push(bracket(wildcard.slice(index + 1, close)));
        index = close;
      }
    } else parts.push({ char });
  }
  return parts;
}

/** A bracket expression's members (`a-z`, `!`/`^` negating), as accepted character codes. */
function bracket(body: string): Uint8Array {
  const negate = body.startsWith("!") || body.startsWith("^");
  const members = negate ? body.slice(1) : body;
  const accepts = new Uint8Array(129);
  for (let index = 0; index < members.length; index++) {
    const low = members.charCodeAt(index);
    let high = low;
    if (members.charAt(index + 1) === "-" && index + 2 < members.length) {
      high = members.charCodeAt(index + 2);
      index += 2;
    }
    if (high >= 128) accepts[128] = 1;
    for (let code = low; code <= Math.min(high, 127); code++) accepts[code] = 1;
  }
  if (negate) for (let code = 0; code < accepts.length; code++) accepts[code] = accepts[code] === 1 ? 0 : 1;
  return accepts;
}

/** Whether the compiled wildcard matches the whole name (the usual matcher: one `*` to go back to). */
function wildcardMatches(parts: readonly WildcardPart[], name: string): boolean {
  let part = 0;
  let at = 0;
  let star = -1;
  let starAt = 0;
  while (at < name.length) {
    const current = parts[part];
    if (current === "*") {
      star = part++;
      starAt = at;
    } else if (current !== undefined && accepts(current, name.charCodeAt(at))) {
      part++;
      at++;
    } else if (star !== -1) {
      part = star + 1;
      at = ++starAt;
    } else return false;
  }
  while (parts[part] === "*") part++;
  return part === parts.length;
}

function accepts(part: Exclude<WildcardPart, "*">, code: number): boolean {
  if (part === "?") return true;
  if (part instanceof Uint8Array) return part[Math.min(code, 128)] === 1;
  return part.char.charCodeAt(0) === code;
}
