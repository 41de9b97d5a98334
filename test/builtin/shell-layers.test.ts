import { describe, expect, it } from "vitest";
import { shellLayers } from "../../src/builtin/shell-layers.js";

describe("shellLayers", () => {
  it.each([
    ["ls", [["ls", 0]]],
    [
      "timeout 5 sh -ec 'ls; bash -c \"pwd\"'",
      [
        ["timeout 5 sh -ec 'ls; bash -c \"pwd\"'", 0],
        ['ls; bash -c "pwd"', 1],
        ["pwd", 2],
      ],
    ],
    [
      "sh -o errexit -c 'a' x",
      [
        ["sh -o errexit -c 'a' x", 0],
        ["a", 1],
      ],
    ],
    ["sh -- -c", [["sh -- -c", 0]]],
    ["sh script.sh -c x", [["sh script.sh -c x", 0]]],
    [
      "env -i -S 'ls\\_-la \"a b\"' x",
      [
        ["env -i -S 'ls\\_-la \"a b\"' x", 0],
        ["env 'ls' '-la' 'a b'", 1],
      ],
    ],
    [
      "timeout 5 /bin/ba?h -c 'ls'",
      [
        ["timeout 5 /bin/ba?h -c 'ls'", 0],
        ["ls", 1],
      ],
    ],
    [
      "S\\H -c a",
      [
        ["S\\H -c a", 0],
        ["a", 1],
      ],
    ],
  ])("%j", (command, expected) => {
    const { layers, tooDeep } = shellLayers(command);
    expect(tooDeep).toBe(false);
    expect(layers.map((layer) => [layer.text, layer.depth])).toEqual(expected);
  });
});
