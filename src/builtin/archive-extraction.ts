// Archive extraction, as `execute_bash`'s checks see it: which commands extract an archive, where
// they write, and which of their options make them write where the archive says (absolute paths,
// `..`). Read from a command's words only (nothing here touches the filesystem); every function is
// linear in the words it is given.
//
// Why it matters: an extraction creates what the archive holds, symlinks included, and GNU tar (like
// unzip) writes *through* a symlink to a directory that is already there. An archive holding
// `link -> /outside`, extracted in one call, and one holding `link/x`, extracted in the next, write
// outside the workspace. So the command guard lets an extraction only run alone (the checks of the
// other commands cannot see what it creates), and in restricted mode the workspace check looks for
// symlinks that lead outside below every directory an extraction writes into (see exec-tool.ts).

/** The programs whose extraction the checks recognise (see {@link extractsArchive}). */
export const EXTRACTORS: readonly string[] = [
  "tar",
  "bsdtar",
  "gtar",
  "unzip",
  "cpio",
  "pax",
  "7z",
  "7za",
  "7zr",
  "7zz",
  "unrar",
  "rar",
  "dpkg-deb",
];

/**
 * Whether `name` (an {@link EXTRACTORS} name) with these arguments extracts an archive, which may
 * create symlinks: `tar`/`bsdtar`/`gtar` with `x` (`xf`, `-xzf`, `--extract`, `--get`, also
 * abbreviated: `--ext`, `--ge`), `unzip` unless it only lists, tests or prints (`-l`, `-t`, `-v`,
 * `-z`, `-Z`, `-p`, `-c`; not the value of `-d` or `-P`: `-dtmp` extracts), `cpio -i`/`-p`,
 * `pax -r`, `7z x`/`e`, `unrar x`/`e`, `dpkg-deb -x`. Over-approximates: it can only say yes more often.
 */
export function extractsArchive(name: string, args: readonly string[]): boolean {
  const operand = args.find((arg) => !arg.startsWith("-"));
  switch (name) {
    case "tar":
    case "bsdtar":
    case "gtar":
      // Any x in a bundle of short options, even in a value (`-fx.tar`): it can only say yes more often.
      return args.some((arg, index) => {
        const option = arg.split("=", 1)[0] as string;
        return (
          abbreviates(option, "--extract", 5) ||
          abbreviates(option, "--get") ||
          /^-[A-Za-z]*x/.test(arg) ||
          (index === 0 && /^[A-Za-z]*x/.test(arg))
        );
      });
    case "unzip":
      return !args.some(unzipOnlyReads);
    case "cpio":
      return args.some((arg) => /^-[A-Za-z]*[ip]/.test(arg) || /^--(?:ext|pass)/.test(arg));
    case "pax":
      return args.some((arg) => /^-[A-Za-z]*r/.test(arg));
    case "7z":
    case "7za":
    case "7zr":
    case "7zz":
    case "unrar":
    case "rar":
      return operand === "x" || operand === "e";
    case "dpkg-deb":
      return args.some((arg) => /^-[A-Za-z]*[xXR]/.test(arg) || /^--(?:v?extract|raw-extract)/.test(arg));
    default:
      return false;
  }
}

/**
 * Whether an argument of unzip makes it only list, test or print (`-l`, `-t`, `-v`, `-z`, `-Z`,
 * `-p`, `-c`): one of those letters in a bundle of options before any letter whose value the rest
 * is (`-dtmp` extracts into `tmp`, `-Ppass` has a password).
 */
function unzipOnlyReads(arg: string): boolean {
  if (!arg.startsWith("-") || arg.startsWith("--")) return false;
  for (let letter = 1; letter < arg.length; letter++) {
    const char = arg.charAt(letter);
    if ("lptvzZc".includes(char)) return true;
    if ("dPx".includes(char)) return false;
  }
  return false;
}

/** Where an extraction writes, as far as its words tell (see {@link extractionTarget}). */
export interface ExtractionTarget {
  /**
   * It may write into the working directory: no option (`tar -C dir` before every member name,
   * `unzip -d dir`, `7z -odir`, `dpkg-deb -x archive dir`) sends every file elsewhere. The
   * directories its words name are destinations either way.
   */
  readonly workingDirectory: boolean;
  /**
   * Set when it writes the paths the archive holds as they are, absolute ones and `..` too: the
   * program and the option that make it (`tar -P (--absolute-names)`, `unzip -:`, `7z -spf`,
   * `cpio`, `pax`), as the model is told.
   */
  readonly unconfined?: string;
}

/**
 * Short options of tar that take a value (attached, or the next word). For `tar`, only those that
 * take one in GNU tar *and* in bsdtar: reading a member name as an option's value could hide it
 * (and with it, that the working directory is a destination); the other way round only checks more.
 */
const TAR_VALUE_LETTERS: Readonly<Record<string, string>> = { tar: "bCfITX", gtar: "bCfFgHIKLNTVX", bsdtar: "bCfIsTX" };
/** Long options of tar (GNU and bsdtar) that take a value, as the next word when it is not after `=`. */
const TAR_LONG_VALUE = new Set([
  "--file",
  "--directory",
  "--files-from",
  "--exclude",
  "--exclude-from",
  "--strip-components",
  "--use-compress-program",
]);

/** Whether `name` is `long` or a prefix of it that GNU getopt would take for it (at least `minimum` characters). */
export function abbreviates(name: string, long: string, minimum = 4): boolean {
  return name.length >= minimum && long.startsWith(name);
}

/**
 * Where an extraction (`name` one of {@link EXTRACTORS}, its arguments as the shell passes them)
 * writes: whether into the working directory, and whether it writes the archive's paths as they
 * are. Errs towards the working directory: an option it cannot read leaves it a destination.
 */
export function extractionTarget(name: string, args: readonly string[]): ExtractionTarget {
  switch (name) {
    case "tar":
    case "gtar":
    case "bsdtar":
      return tarTarget(name, args);
    case "unzip":
      return unzipTarget(args);
    case "cpio":
    case "pax":
      return { workingDirectory: true, unconfined: name };
    case "7z":
    case "7za":
    case "7zr":
    case "7zz": {
      if (args.some((arg) => /^-spf/i.test(arg))) return { workingDirectory: true, unconfined: `${name} -spf` };
      return { workingDirectory: !args.some((arg) => /^-o./.test(arg)) };
    }
    case "dpkg-deb":
      // `-x archive directory`: always into the directory it names.
      return { workingDirectory: args.filter((arg) => !arg.startsWith("-")).length < 2 };
    default:
      return { workingDirectory: true };
  }
}

/**
 * tar writes into the working directory unless a `-C`/`--directory` comes before every member name
 * (the names after a `-C` go there; `-T list` names members where it stands). `-P` /
 * `--absolute-names` keeps absolute paths and `..`.
 */
function tarTarget(name: string, args: readonly string[]): ExtractionTarget {
  const valued = TAR_VALUE_LETTERS[name] ?? TAR_VALUE_LETTERS.tar ?? "";
  let directory = false;
  let workingDirectory = false;
  let absolute = false;
  const member = () => {
    if (!directory) workingDirectory = true;
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg === "--") {
      if (index + 1 < args.length) member();
      break;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const option = equals === -1 ? arg : arg.slice(0, equals);
      // bsdtar spells -P --absolute-paths.
      if (abbreviates(option, "--absolute-names") || abbreviates(option, "--absolute-paths")) absolute = true;
      else if (abbreviates(option, "--directory", 5)) directory = true;
      // `--file` itself names the archive; `--files` … is --files-from.
      else if (abbreviates(option, "--files-from", 7)) member();
      if (equals === -1 && TAR_LONG_VALUE.has(option)) index++;
      continue;
    }
    // The first word without `-` is old-style options (`xzf`): each letter that takes a value takes the next word.
    const oldStyle = index === 0 && !arg.startsWith("-");
    if (!oldStyle && (!arg.startsWith("-") || arg === "-")) {
      member();
      continue;
    }
    let taken = 0;
    for (let letter = oldStyle ? 0 : 1; letter < arg.length; letter++) {
      const char = arg.charAt(letter);
      if (char === "P") absolute = true;
      if (!valued.includes(char)) continue;
      if (char === "C") directory = true;
      // -T, and bsdtar's -I (which `tar` may be), name members where they stand.
      else if (char === "T" || (char === "I" && name !== "gtar")) member();
      if (oldStyle) {
        taken++;
        continue;
      }
      // The rest of the word is its value; or the next word is.
      if (letter === arg.length - 1) taken = 1;
      break;
    }
    index += taken;
  }
  if (!directory) workingDirectory = true;
  if (absolute)
    return {
      workingDirectory,
      unconfined: name === "bsdtar" ? "bsdtar -P (--absolute-paths)" : `${name} -P (--absolute-names)`,
    };
  return { workingDirectory };
}

/** unzip writes into the working directory unless `-d dir` names another; `-:` keeps `..` and absolute paths. */
function unzipTarget(args: readonly string[]): ExtractionTarget {
  let directory = false;
  let absolute = false;
  for (const arg of args) {
    if (!arg.startsWith("-")) continue;
    for (let letter = 1; letter < arg.length; letter++) {
      const char = arg.charAt(letter);
      if (char === ":") absolute = true;
      if (char === "d") directory = true;
      // The rest of the word is the value of -d (the directory), -P (a password), or -x's first name.
      if (char === "d" || char === "P" || char === "x") break;
    }
  }
  if (absolute) return { workingDirectory: !directory, unconfined: "unzip -:" };
  return { workingDirectory: !directory };
}

/**
 * Environment variables that hold options for an extractor (`TAR_OPTIONS=-P tar xf a.tar`), which
 * the checks do not read: an extraction whose command sets one is refused in restricted mode.
 */
export const EXTRACTOR_OPTION_VARIABLES = /^(?:TAR_OPTIONS|TAR_READER_OPTIONS|UNZIP|UNZIPOPT)=/;
