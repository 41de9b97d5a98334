import { describe, expect, it } from "vitest";
import { isCompressorFilter, programScripts, variableScript } from "../../src/builtin/program-scripts.js";

describe("programScripts", () => {
  it.each([
    // tar
    ["tar", ["-xf", "a.tar", "--to-command=cat -n"], ["cat -n"]],
    ["tar", ["-xf", "a.tar", "--to-command", "cat -n"], ["cat -n"]],
    ["tar", ["-xf", "a.tar", "--to-c=cat"], ["cat"]],
    ["tar", ["-I", "zstd -d", "-xf", "a"], ["zstd -d"]],
    ["tar", ["-xvIzstd", "-f", "a"], ["zstd"]],
    ["tar", ["-xfI", "a"], []],
    ["tar", ["xIf", "zstd", "a.tar"], ["zstd"]],
    ["tar", ["xfI", "a.tar", "zstd"], ["zstd"]],
    // -H takes a value in GNU tar only: which word is -I's is not known, so both are read
    ["tar", ["xHIf", "posix", "zstd", "a.tar"], ["posix", "zstd", "a.tar"]],
    ["tar", ["--use-compress-program=unzstd", "-xf", "a"], ["unzstd"]],
    ["tar", ["--checkpoint-action=exec=date", "-xf", "a"], ["date"]],
    ["tar", ["--checkpoint-action=dot", "-xf", "a"], []],
    ["tar", ["-cf", "a.tar", "-F", "next.sh", "-M", "."], ["next.sh"]],
    [
      "tar",
      ["--info-script=a", "--new-volume-script", "b", "--rsh-command=c", "--rmt-command=d"],
      ["a", "b", "c", "d"],
    ],
    ["tar", ["-xf", "a.tar", "--", "--to-command=x"], []],
    ["tar", ["-xzf", "a.tgz", "-C", "out"], []],
    // zip, rsync
    ["zip", ["-T", "-TT", "unzip -t", "a.zip", "f"], ["unzip -t"]],
    ["zip", ["-TT=unzip -t", "a.zip"], ["unzip -t"]],
    ["zip", ["--unzip-command", "unzip -t", "a.zip"], ["unzip -t"]],
    ["zip", ["-r", "a.zip", "src"], []],
    ["rsync", ["-e", "ssh -p 22", "a", "h:b"], ["ssh -p 22"]],
    ["rsync", ["-avze", "ssh", "a", "h:b"], ["ssh"]],
    ["rsync", ["-essh", "a", "h:b"], ["ssh"]],
    ["rsync", ["-e=ssh", "a", "h:b"], ["ssh"]],
    ["rsync", ["--rsh=ssh", "--rsync-path", "sudo rsync", "a", "h:b"], ["ssh", "sudo rsync"]],
    ["rsync", ["-f", "exclude e", "a", "b"], []],
    // -c of flock, script, runuser, su
    ["flock", ["/tmp/l", "-c", "npm test"], ["npm test"]],
    ["flock", ["-w", "5", "/tmp/l", "--command=ls"], ["ls"]],
    ["flock", ["/tmp/l", "rsync", "-e", "ssh -p 2", "a"], ["'rsync' '-e' 'ssh -p 2' 'a'"]],
    ["flock", ["-xw", "5", "/tmp/l", "echo", "it's"], ["'echo' 'it'\\''s'"]],
    ["flock", ["/tmp/l"], []],
    ["runuser", ["-u", "x", "--", "ls", "-la"], ["'ls' '-la'"]],
    ["runuser", ["-u", "x", "-c", "ls"], ["ls"]],
    ["script", ["-qc", "ls", "/dev/null"], ["ls"]],
    ["su", ["-c", "ls", "x"], ["ls"]],
    ["sg", ["users", "-c", "ls -la"], ["ls -la"]],
    ["sg", ["users", "ls"], ["ls"]],
    // watch: its command words, joined
    ["watch", ["-n", "5", "ls", "-la"], ["ls -la"]],
    ["watch", ["-dn5", "--", "ls"], ["ls"]],
    ["watch", ["--interval", "5", "ls"], ["ls"]],
    ["watch", ["-n"], []],
    // git
    ["git", ["-c", "core.pager=less -R", "log"], ["less -R"]],
    ["git", ["-c", "alias.x=!sh -c ls", "x"], ["sh -c ls"]],
    ["git", ["-c", "core.bare"], []],
    ["git", ["rebase", "--exec=make", "main"], ["make"]],
    ["git", ["rebase", "-x", "make", "main"], ["make"]],
    ["git", ["difftool", "--extcmd", "diff -u"], ["diff -u"]],
    ["git", ["clone", "--upload-pack=up", "x"], ["up"]],
    ["git", ["grep", "-Ovim", "x"], ["vim"]],
    ["git", ["filter-branch", "--tree-filter", "make", "HEAD"], ["make"]],
    ["git", ["submodule", "foreach", "--recursive", "git", "pull"], ["git pull"]],
    ["git", ["bisect", "run", "make", "test"], ["make test"]],
    ["git", ["log", "--format=%H", "-n", "1"], []],
    // not one of them
    ["ls", ["-c", "x"], []],
  ])("%s %j runs %j", (name, args, scripts) => {
    expect(programScripts(name, args)).toEqual(scripts);
  });
});

describe("variableScript", () => {
  it.each([
    ["GIT_SSH_COMMAND=ssh -i key", "ssh -i key"],
    ["RSYNC_RSH=ssh", "ssh"],
    ["PAGER=less", "less"],
    ["GIT_CONFIG_VALUE_0=!rm x", "rm x"],
    ["LESSOPEN=|lesspipe %s", "lesspipe %s"],
    ["LESSOPEN=||-lesspipe %s", "lesspipe %s"],
    ["TAR_OPTIONS=--to-command=cat", "tar --to-command=cat"],
    ["ZIPOPT=-TT x", "zip -TT x"],
  ])("%j makes a program run %j", (word, script) => {
    expect(variableScript(word)).toBe(script);
  });

  it.each([["HOME=/x"], ["PAGER="], ["GIT_CONFIG_VALUE_X=y"], ["notanassignment"], ["=x"]])(
    "%j runs nothing",
    (word) => {
      expect(variableScript(word)).toBeUndefined();
    },
  );
});

describe("isCompressorFilter", () => {
  it.each([[["zstd"]], [["xz", "-T0"]], [["/usr/bin/pigz", "-d"]], [["gzip", "-9"]]])("%j filters", (words) => {
    expect(isCompressorFilter(words)).toBe(true);
  });

  it.each([[[]], [["cat"]], [["zstd", "link/x"]], [["gzip", "-c", "secret"]], [["sh", "-c", "zstd"]]])(
    "%j may read or run more",
    (words) => {
      expect(isCompressorFilter(words)).toBe(false);
    },
  );
});
