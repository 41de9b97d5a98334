import { describe, expect, it } from "vitest";
import { commandWords } from "../../src/builtin/shell-tokens.js";

describe("commandWords", () => {
  it.each([
    ["ls -la src", ["ls", "-la", "src"]],
    [`cat "my file" 'a b'\\ c`, ["cat", "my file", "a b c"]],
    ["ls 2>/dev/null;cat x|wc", ["ls", "2", "/dev/null", "cat", "x", "wc"]],
    ['echo "a\\"b" \'c\\d\'', ["echo", 'a"b', "c\\d"]],
    ["cat le''ak/x", ["cat", "leak/x"]],
    ["echo ''", ["echo", ""]],
    ["a\\\nb", ["ab"]],
  ])("%j → %j", (command, expected) => {
    expect(commandWords(command).map((word) => word.text)).toEqual(expected);
  });

  it.each([
    ["ls *.ts", [false, true]],
    ["ls '*.ts' \"*\" \\*", [false, false, false, false]],
    ["ls a'*'b*", [false, true]],
    ["echo {a,b} '{a,b}' x[1]", [false, true, false, true]],
  ])("%j: which words the shell may expand", (command, expected) => {
    expect(commandWords(command).map((word) => word.expands)).toEqual(expected);
  });
});

describe("commandWords: parameter expansions", () => {
  it.each([
    ["echo $HOME", [[], ["HOME"]]],
    ["echo '$HOME' \\$HOME", [[], [], []]],
    ['cd "$p$p"/x', [[], ["p", "p"]]],
    ["echo $? $! $$ $1 $@ $# $-", [[], ["?"], ["!"], ["$"], ["1"], ["@"], ["#"], ["-"]]],
    ["echo a$ $ 5$/x", [[], [], [], []]],
    ["echo $[1] $'x' a$(", [[], ["["], ["'"], ["("]]],
  ])("%j", (command, expected) => {
    expect(commandWords(command).map((word) => word.parameters)).toEqual(expected);
  });

  it("keeps the text of each expansion in the word", () => {
    expect(commandWords('cd "$p$p"/x $HOME').map((word) => word.text)).toEqual(["cd", "$p$p/x", "$HOME"]);
  });
});
