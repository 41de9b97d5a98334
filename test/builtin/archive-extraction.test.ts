import { describe, expect, it } from "vitest";
import {
  abbreviates,
  EXTRACTOR_OPTION_VARIABLES,
  extractionTarget,
  extractsArchive,
} from "../../src/builtin/archive-extraction.js";

const words = (args: string) => (args === "" ? [] : args.split(" "));

describe("extractsArchive", () => {
  it.each([
    ["tar", "xf a.tar"],
    ["tar", "-xzf a.tgz"],
    ["tar", "--extract -f a.tar"],
    ["tar", "-C out --get -f a.tar"],
    ["bsdtar", "-xf a.tar"],
    ["unzip", "a.zip"],
    ["unzip", "-o a.zip -d out"],
    ["cpio", "-idm"],
    ["pax", "-r -f a.pax"],
    ["7z", "x a.7z"],
    ["unrar", "e a.rar"],
    ["dpkg-deb", "-x a.deb out"],
    // abbreviated long options, and values that hold a letter of another mode
    ["tar", "--ge -f a.tar"],
    ["tar", "--ext -f a.tar"],
    ["unzip", "-dtmp a.zip"],
    ["unzip", "-Ppassword a.zip"],
    ["unzip", "-od tmp a.zip"],
  ])("%s %s extracts", (name, args) => {
    expect(extractsArchive(name, words(args))).toBe(true);
  });

  it.each([
    ["tar", "czf a.tgz src"],
    ["tar", "tf a.tar"],
    ["unzip", "-l a.zip"],
    ["unzip", "-p a.zip file"],
    ["unzip", "-c a.zip file"],
    ["unzip", "-qql a.zip"],
    ["cpio", "-o"],
    ["7z", "l a.7z"],
    ["dpkg-deb", "-c a.deb"],
  ])("%s %s does not", (name, args) => {
    expect(extractsArchive(name, words(args))).toBe(false);
  });
});

describe("extractionTarget", () => {
  it.each([
    // tar: into the working directory unless a -C comes before every member name
    ["tar", "xf a.tar", true],
    ["tar", "-xf a.tar -C out", false],
    ["tar", "-C out -xf a.tar", false],
    ["tar", "xfC a.tar out", false],
    ["tar", "-xCout -f a.tar", false],
    ["tar", "--directory=out -xf a.tar", false],
    ["tar", "--dir out -xf a.tar", false],
    ["tar", "-xf a.tar member -C out", true],
    ["tar", "-xf a.tar -C out member", false],
    ["tar", "-x -T list -C out -f a.tar", true],
    ["tar", "-x --files-from=list -C out -f a.tar", true],
    ["tar", "-x --files list -C out -f a.tar", true],
    ["tar", "-x --file=a.tar -C out", false],
    ["tar", "-x --file a.tar -C out", false],
    ["tar", "-x -C out -- member", false],
    ["tar", "-x -f a.tar -- -C", true],
    // a value tar may not take (GNU's -H, bsdtar's flag) read as a member: the working directory stays
    ["tar", "-xH posix -C out -f a.tar", true],
    ["gtar", "-xH posix -C out -f a.tar", false],
    // an option it does not know, with its value as the next word: read as a member
    ["tar", "--unknown value -C out -xf a.tar", true],
    ["unzip", "a.zip", true],
    ["unzip", "a.zip -d out", false],
    ["unzip", "-qod out a.zip", false],
    ["unzip", "-Pdsecret a.zip", true],
    ["7z", "x a.7z", true],
    ["7z", "x a.7z -oout", false],
    ["dpkg-deb", "-x a.deb out", false],
    ["unrar", "x a.rar out/", true],
  ])("%s %s: into the working directory: %s", (name, args, workingDirectory) => {
    expect(extractionTarget(name, words(args))).toEqual({ workingDirectory });
  });

  it.each([
    ["tar", "-xPf a.tar", "tar -P (--absolute-names)"],
    ["tar", "xPf a.tar", "tar -P (--absolute-names)"],
    ["tar", "-x --abs -f a.tar", "tar -P (--absolute-names)"],
    ["gtar", "--absolute-names -xf a.tar", "gtar -P (--absolute-names)"],
    ["bsdtar", "--absolute-paths -xf a.tar", "bsdtar -P (--absolute-paths)"],
    ["unzip", "-: a.zip", "unzip -:"],
    ["unzip", "-o: a.zip", "unzip -:"],
    ["cpio", "-idm", "cpio"],
    ["pax", "-rw src dest", "pax"],
    ["7z", "x -spf a.7z", "7z -spf"],
  ])("%s %s writes the archive's paths as they are (%s)", (name, args, unconfined) => {
    expect(extractionTarget(name, words(args)).unconfined).toBe(unconfined);
  });

  it("reads -P only where it is an option, not inside another option's value", () => {
    expect(extractionTarget("tar", words("-xfP")).unconfined).toBeUndefined();
    expect(extractionTarget("unzip", words("-Ppass: a.zip")).unconfined).toBeUndefined();
  });
});

describe("abbreviates", () => {
  it("takes a long option's prefix of at least four characters (GNU getopt takes an unambiguous one)", () => {
    expect(abbreviates("--to-command", "--to-command")).toBe(true);
    expect(abbreviates("--to-c", "--to-command")).toBe(true);
    expect(abbreviates("--t", "--to-command")).toBe(false);
    expect(abbreviates("--to-commandx", "--to-command")).toBe(false);
    expect(abbreviates("--dir", "--directory", 5)).toBe(true);
    expect(abbreviates("--di", "--directory", 5)).toBe(false);
  });
});

describe("EXTRACTOR_OPTION_VARIABLES", () => {
  it("names the variables that give an extractor options", () => {
    expect(
      ["TAR_OPTIONS=-P", "UNZIP=-:", "UNZIPOPT=-:", "TAR_READER_OPTIONS=x"].every((word) =>
        EXTRACTOR_OPTION_VARIABLES.test(word),
      ),
    ).toBe(true);
    expect(EXTRACTOR_OPTION_VARIABLES.test("MY_TAR_OPTIONS=-P")).toBe(false);
  });
});
