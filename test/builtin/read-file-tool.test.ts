import { appendFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createFileTools } from "../../src/builtin/index.js";
import type { ToolResult } from "../../src/index.js";
import { linux, read, setup, useFileWorkspace, workspace, ws } from "../helpers/file-workspace.js";
import { TINY_IMAGES } from "../helpers/tiny-images.js";

useFileWorkspace();

describe("read_file", () => {
  it('returns "N|line" lines', async () => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt" }))).toEqual({
      text: "1|one\n2|two\n3|three",
      isError: false,
    });
  });

  it("reads a file without a final line feed, CRLF lines as they are, and an empty file", async () => {
    writeFileSync(ws("a.txt"), "x\r\ny");
    writeFileSync(ws("empty.txt"), "");
    const { call } = setup();
    expect(await read(call("read_file", { path: "a.txt" }))).toEqual({ text: "1|x\r\n2|y", isError: false });
    expect(await read(call("read_file", { path: "empty.txt" }))).toEqual({ text: "(empty file)", isError: false });
    expect(await read(call("read_file", { path: "empty.txt", start_line: 2 }))).toEqual({
      text: 'start_line 2 is past the end of "empty.txt" (it has 0 lines)',
      isError: true,
    });
    expect(await read(call("read_file", { path: "a.txt", start_line: 3 }))).toEqual({
      text: 'start_line 3 is past the end of "a.txt" (it has 2 lines)',
      isError: true,
    });
  });

  it.each([
    [{ start_line: 2 }, "2|two\n3|three"],
    [{ start_line: 2, end_line: 2 }, "2|two"],
    [{ end_line: 1 }, "1|one"],
    [{ start_line: 3, end_line: 1_000_000 }, "3|three"],
    [{ start_line: 1, end_line: 1e300 }, "1|one\n2|two\n3|three"],
  ])("reads the range %j", async (range, text) => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt", ...range }))).toEqual({ text, isError: false });
  });

  it.each([
    [{ start_line: 4 }, 'start_line 4 is past the end of "notes.txt" (it has 3 lines)'],
    [{ start_line: 1e300 }, 'start_line 1e+300 is past the end of "notes.txt" (it has 3 lines)'],
    [{ start_line: 3, end_line: 2 }, "end_line (2) is before start_line (3)"],
  ])("refuses the range %j", async (range, text) => {
    const { call } = setup();
    expect(await read(call("read_file", { path: "notes.txt", ...range }))).toEqual({ text, isError: true });
  });

  it.each([
    [{ start_line: 0 }],
    [{ start_line: -1 }],
    [{ end_line: 0 }],
    [{ start_line: 1.5 }],
    [{ start_line: "2" }],
    [{ start_line: null }],
    [{ end_line: Number.NaN }],
    [{ path: 42 }],
    [{ extra: true }],
  ])("rejects %j by the schema", async (args) => {
    const { call } = setup();
    const result = await call("read_file", { path: "notes.txt", ...args });
    expect(result.isError).toBe(true);
    expect(result.err).toMatchObject({ code: "invalid_arguments" });
  });

  it("refuses bad line values when called without the registry's validation", async () => {
    const [readTool] = createFileTools({ workspace });
    const { createToolContext } = await import("../../src/testing/index.js");
    const result = (await readTool?.execute({ path: "notes.txt", start_line: 0 }, createToolContext())) as ToolResult;
    expect(result.contentForLLM()).toBe("start_line must be an integer ≥ 1");
  });

  it("stops reading when the call is aborted", async () => {
    const [readTool] = createFileTools({ workspace });
    const { createToolContext } = await import("../../src/testing/index.js");
    const context = createToolContext({ signal: AbortSignal.abort() });
    const result = (await readTool?.execute({ path: "notes.txt" }, context)) as ToolResult;
    expect([result.contentForLLM(), result.isError]).toEqual(["read_file aborted", true]);
  });

  it.each([
    ["a NUL byte", Buffer.from("text\0more")],
    ["a NUL byte after the first chunk", Buffer.concat([Buffer.alloc(70_000, "a"), Buffer.from([0])])],
    ["mostly control characters", Buffer.from("\x01\x02\x03\x04ab\x05\x06\x07\x08")],
    ["11 % control characters", Buffer.concat([Buffer.alloc(89, "a"), Buffer.alloc(11, 1)])],
  ])("refuses a binary file: %s", async (_, bytes) => {
    writeFileSync(ws("blob.txt"), bytes);
    const { call } = setup({ maxReadBytes: 1_000_000 });
    expect(await read(call("read_file", { path: "blob.txt" }))).toEqual({
      text: '"blob.txt" looks like a binary file (NUL bytes or control characters): read_file only reads text',
      isError: true,
    });
  });

  it("reads text with a few control characters (10 %) and escape codes", async () => {
    writeFileSync(ws("log.txt"), Buffer.concat([Buffer.alloc(90, "a"), Buffer.alloc(10, 1)]));
    writeFileSync(ws("ansi.txt"), "\x1b[31mred\x1b[0m\tok\f\n");
    const { call } = setup();
    expect((await call("read_file", { path: "log.txt" })).isError).toBe(false);
    expect(await read(call("read_file", { path: "ansi.txt" }))).toEqual({
      text: "1|\x1b[31mred\x1b[0m\tok\f",
      isError: false,
    });
  });

  it("cuts at maxReadBytes on a line boundary with a marker naming the start_line to read on", async () => {
    writeFileSync(ws("long.txt"), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n"));
    // 44 bytes: exactly "1|line 1" and four more "\nN|line N" — the prefixes and line feeds count.
    const { call } = setup({ maxReadBytes: 44 });
    const first = await read(call("read_file", { path: "long.txt" }));
    expect(first.text).toMatchInlineSnapshot(`
      "1|line 1
      2|line 2
      3|line 3
      4|line 4
      5|line 5
      [cut: read_file returns at most 44 bytes per call; read the rest with start_line=6]"
    `);
    const { call: smaller } = setup({ maxReadBytes: 43 });
    expect((await read(smaller("read_file", { path: "long.txt" }))).text).toBe(
      "1|line 1\n2|line 2\n3|line 3\n4|line 4\n[cut: read_file returns at most 43 bytes per call; read the rest with start_line=5]",
    );
    expect(await read(call("read_file", { path: "long.txt", start_line: 5, end_line: 6 }))).toEqual({
      text: "5|line 5\n6|line 6",
      isError: false,
    });
  });

  it("reads lines across chunk boundaries exactly (lines of every length, 200 kB)", async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => `${i}:${"é-x".repeat(i % 37)}`);
    writeFileSync(ws("chunks.txt"), `${lines.join("\n")}\n`);
    const { call } = setup({ maxReadBytes: 1_000_000 });
    const expected = lines.map((line, i) => `${i + 1}|${line}`);
    expect((await read(call("read_file", { path: "chunks.txt" }))).text).toBe(expected.join("\n"));
    expect((await read(call("read_file", { path: "chunks.txt", start_line: 1_500, end_line: 1_600 }))).text).toBe(
      expected.slice(1_499, 1_600).join("\n"),
    );
  });

  it("following the markers reads every line once, in order, long lines a part at a time (property)", async () => {
    const line = fc.string({ unit: fc.constantFrom("a", "é", " ", "\t", "😀", "€"), maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        // From 8: the widest character (4 bytes) always fits after the longest prefix ("40|");
        // lines longer than the budget are read with line_offset, a part per call.
        fc.integer({ min: 8, max: 120 }),
        async (lines, finalNewline, budget) => {
          writeFileSync(ws("prop.txt"), lines.join("\n") + (finalNewline ? "\n" : ""));
          const { call } = setup({ maxReadBytes: budget });
          const seen = new Map<number, string>();
          let args: Record<string, unknown> = { start_line: 1 };
          for (let calls = 0; calls < 1_000; calls++) {
            const { text, isError } = await read(call("read_file", { path: "prop.txt", ...args }));
            if (isError || text === "(empty file)") break; // past the end
            const parts = text.split("\n");
            const marker = /start_line=(\d+)(?: and line_offset=(\d+))?/.exec(parts.at(-1) ?? "");
            if (marker !== null) parts.pop();
            for (const part of parts) {
              const bar = part.indexOf("|");
              const number = Number(part.slice(0, bar));
              seen.set(number, (seen.get(number) ?? "") + part.slice(bar + 1));
            }
            expect(Buffer.byteLength(parts.join("\n"))).toBeLessThanOrEqual(budget);
            if (marker === null) break;
            args = {
              start_line: Number(marker[1]),
              ...(marker[2] === undefined ? {} : { line_offset: Number(marker[2]) }),
            };
          }
          const shown = finalNewline || lines.at(-1) !== "" ? lines : lines.slice(0, -1);
          expect([...seen.values()]).toEqual(shown);
          expect([...seen.keys()]).toEqual(shown.map((_, i) => i + 1));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("reads lines of invalid UTF-8 in parts as the whole line decodes, never over maxReadBytes (property)", async () => {
    // Valid characters, stray continuation bytes, cut and overlong sequences, bytes that lead nothing.
    const piece = fc.constantFrom(
      [0x61],
      [0xc3, 0xa9],
      [0xe2, 0x82, 0xac],
      [0xf0, 0x9f, 0x98, 0x80],
      [0x80],
      [0xbf, 0x80],
      [0xe2, 0x82],
      [0xf0, 0x9f],
      [0xc0, 0x80],
      [0xe0, 0x80],
      [0xff],
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(piece, { maxLength: 12 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 16, max: 60 }),
        async (lines, budget) => {
          const bytes = lines.map((pieces) => Buffer.from(pieces.flat()));
          writeFileSync(ws("bad.txt"), Buffer.concat(bytes.flatMap((line) => [line, Buffer.from("\n")])));
          const { call } = setup({ maxReadBytes: budget });
          const seen = new Map<number, string>();
          let args: Record<string, unknown> = { start_line: 1 };
          for (let calls = 0; calls < 1_000; calls++) {
            const { text, isError } = await read(call("read_file", { path: "bad.txt", ...args }));
            if (isError) break; // past the end
            const parts = text.split("\n");
            const marker = /start_line=(\d+)(?: and line_offset=(\d+))?/.exec(parts.at(-1) ?? "");
            if (marker !== null) parts.pop();
            expect(Buffer.byteLength(parts.join("\n"))).toBeLessThanOrEqual(budget);
            for (const part of parts) {
              const bar = part.indexOf("|");
              const number = Number(part.slice(0, bar));
              seen.set(number, (seen.get(number) ?? "") + part.slice(bar + 1));
            }
            if (marker === null) break;
            args = {
              start_line: Number(marker[1]),
              ...(marker[2] === undefined ? {} : { line_offset: Number(marker[2]) }),
            };
          }
          expect([...seen.values()]).toEqual(bytes.map((line) => new TextDecoder().decode(line)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("reads on after a cut between E0 and 80 (two replacement characters, not one character split)", async () => {
    // Found by the property above: the part after line_offset dropped the 80, read as the rest of E0.
    writeFileSync(ws("bad.txt"), Buffer.from([0xe0, 0x80, 0xf0, 0x9f, 0x98, 0x80, 0xf0, 0x9f, 0x80, 0xe0, 0x80, 0x0a]));
    const { call } = setup({ maxReadBytes: 18 });
    const first = await read(call("read_file", { path: "bad.txt" }));
    expect(first.text).toMatch(/^1\|\ufffd\ufffd😀\ufffd\ufffd\n\[cut: .* start_line=1 and line_offset=10,/);
    expect(await read(call("read_file", { path: "bad.txt", start_line: 1, line_offset: 10 }))).toEqual({
      text: "1|\ufffd",
      isError: false,
    });
  });

  it("reads a long line of mixed valid and invalid UTF-8 in parts of many blocks, as it decodes whole", async () => {
    const pieces = [[0x61], [0xc3, 0xa9], [0xf0, 0x9f, 0x98, 0x80], [0x80], [0xe2, 0x82], [0xff], [0xe0, 0x80]];
    // A fixed pseudo-random mix, 40,000 pieces (about 80 KB), read 5,000 bytes at a time.
    let seed = 7;
    const line = Buffer.from(
      Array.from({ length: 40_000 }, () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return pieces[seed % pieces.length] as number[];
      }).flat(),
    );
    writeFileSync(ws("mixed.txt"), Buffer.concat([line, Buffer.from("\nend\n")]));
    const { call } = setup({ maxReadBytes: 5_000 });
    let text = "";
    let args: Record<string, unknown> = {};
    for (let calls = 0; calls < 100; calls++) {
      const result = await read(call("read_file", { path: "mixed.txt", ...args }));
      const [shown = "", marker = ""] = result.text.split("\n");
      expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(5_000);
      text += shown.slice(2);
      const offset = /line_offset=(\d+)/.exec(marker)?.[1];
      if (offset === undefined) break;
      // A part fills the budget but for what the next character (or up to 4 bad bytes, 12) needs.
      expect(Buffer.byteLength(shown)).toBeGreaterThan(5_000 - 12);
      args = { line_offset: Number(offset) };
    }
    expect(text === new TextDecoder().decode(line)).toBe(true);
  });

  it("cuts a single line longer than maxReadBytes, never inside a UTF-8 character, and reads on in it with line_offset", async () => {
    writeFileSync(ws("wide.txt"), `${"é".repeat(20)}\nnext\n`);
    // 11 bytes: "1|" and 9 bytes of the line, which would end inside the fifth "é".
    const { call } = setup({ maxReadBytes: 11 });
    expect(await read(call("read_file", { path: "wide.txt" }))).toEqual({
      text: "1|éééé\n[cut: line 1 is longer than the 11 bytes read_file returns per call; read on in it with start_line=1 and line_offset=8, or from the next line with start_line=2]",
      isError: false,
    });
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 24 }))).toEqual({
      text: "1|éééé\n[cut: line 1 is longer than the 11 bytes read_file returns per call; read on in it with start_line=1 and line_offset=32, or from the next line with start_line=2]",
      isError: false,
    });
    // The rest of the line fits: the next lines follow as usual.
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 36 }))).toEqual({
      text: "1|éé\n[cut: read_file returns at most 11 bytes per call; read the rest with start_line=2]",
      isError: false,
    });
    // An offset inside a character starts at the next one; one past the line is refused.
    expect((await read(call("read_file", { path: "wide.txt", line_offset: 37 }))).text).toBe("1|é\n2|next");
    expect(await read(call("read_file", { path: "wide.txt", line_offset: 40 }))).toEqual({
      text: "line_offset 40 is past the end of line 1 (it has 40 bytes)",
      isError: true,
    });
    expect(await read(call("read_file", { path: "wide.txt", start_line: 2, line_offset: 2, end_line: 2 }))).toEqual({
      text: "2|xt",
      isError: false,
    });
    const negative = await call("read_file", { path: "wide.txt", line_offset: -1 });
    expect(negative.err).toMatchObject({ code: "invalid_arguments" });
  });

  it("counts the text as returned against maxReadBytes: each invalid byte is U+FFFD, 3 bytes of UTF-8", async () => {
    // 200 lines of 1,000 bytes 0xFF: once 65,338 characters, 195,338 bytes of UTF-8, for 65,536.
    const line = Buffer.concat([Buffer.alloc(1_000, 0xff), Buffer.from("\n")]);
    writeFileSync(ws("ff.txt"), Buffer.concat(Array<Buffer>(200).fill(line)));
    const { call } = setup();
    const { text, isError } = await read(call("read_file", { path: "ff.txt" }));
    expect(isError).toBe(false);
    const lines = text.split("\n");
    expect(lines.pop()).toMatch(
      /^\[cut: read_file returns at most 65536 bytes per call; read the rest with start_line=\d+]$/,
    );
    expect(Buffer.byteLength(lines.join("\n"))).toBeLessThanOrEqual(65_536);
    expect(lines[0]).toBe(`1|${"\ufffd".repeat(1_000)}`);
  });

  it("cuts a first line of stray continuation bytes where the budget ends, not at its start", async () => {
    // "A" and 70,000 bytes 0x80: the cut once walked back through all of them and showed "1|".
    writeFileSync(
      ws("cont.txt"),
      Buffer.concat([Buffer.from("A"), Buffer.alloc(70_000, 0x80), Buffer.from("\nline two\n")]),
    );
    const { call } = setup();
    const { text } = await read(call("read_file", { path: "cont.txt" }));
    const [shown = "", marker] = text.split("\n");
    // 65,534 bytes of room after "1|": "A" and 21,844 U+FFFD (3 bytes each).
    expect(shown === `1|A${"\ufffd".repeat(21_844)}`).toBe(true);
    expect(marker).toBe(
      "[cut: line 1 is longer than the 65536 bytes read_file returns per call; read on in it with start_line=1 and line_offset=21845, or from the next line with start_line=2]",
    );
    const next = await read(call("read_file", { path: "cont.txt", line_offset: 21_845 }));
    expect(next.text.split("\n")[0] === `1|${"\ufffd".repeat(21_844)}`).toBe(true);
    expect(await read(call("read_file", { path: "cont.txt", line_offset: 70_000 }))).toEqual({
      text: `1|\ufffd\n2|line two`,
      isError: false,
    });
  });

  it("reads no further than the size the file had when it was opened (a file that keeps growing)", async () => {
    writeFileSync(ws("grow.log"), "one\ntwo\nthree\n");
    // Another process appends 64 KiB of line feeds before each read: the reader never catches up.
    const probe = await open(ws("grow.log"), "r");
    const prototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const original = prototype.read;
    const feeds = Buffer.alloc(65_536, 10);
    let appended = 0;
    prototype.read = function (this: unknown, ...args: unknown[]) {
      // At most 4 MiB in all: enough to tell, without filling the disk when the bound is missing.
      if (appended < 64) {
        appendFileSync(ws("grow.log"), feeds);
        appended++;
      }
      return original.apply(this, args);
    };
    try {
      const { call } = setup();
      expect(await read(call("read_file", { path: "grow.log", start_line: 1e15 }))).toEqual({
        text: 'start_line 1000000000000000 is past the end of "grow.log" (it has 3 lines)',
        isError: true,
      });
      expect(appended).toBe(1);
    } finally {
      prototype.read = original;
    }
  });

  it.runIf(linux)("reads a file whose size reads 0 (in /proc), up to 1 MiB", async () => {
    const status = `/proc/${process.pid}/status`;
    const { call } = setup({ allowReadPaths: [/^\/proc\/\d+\/status$/] });
    const { text, isError } = await read(call("read_file", { path: status }));
    expect(isError).toBe(false);
    expect(text).toMatch(/^1\|Name:\t/);
  });

  it("counts the N| prefixes against maxReadBytes: a file of empty lines returns at most maxReadBytes", async () => {
    // 1 MiB of line feeds: once 8.3 M characters back, every "N|" prefix free.
    writeFileSync(ws("empty-lines.txt"), "\n".repeat(1024 * 1024));
    const { call } = setup();
    const { text, isError } = await read(call("read_file", { path: "empty-lines.txt" }));
    expect(isError).toBe(false);
    const lines = text.split("\n");
    const marker = lines.pop() ?? "";
    const next = Number(/start_line=(\d+)\]$/.exec(marker)?.[1]);
    expect(Buffer.byteLength(lines.join("\n"))).toBeLessThanOrEqual(65_536);
    expect(Buffer.byteLength(lines.join("\n"))).toBeGreaterThan(65_536 - 10);
    expect(lines).toEqual(Array.from({ length: next - 1 }, (_, i) => `${i + 1}|`));
    // Far into the file, where each prefix is longer, the bound holds the same.
    const far = await read(call("read_file", { path: "empty-lines.txt", start_line: 1_000_000 }));
    const farLines = far.text.split("\n");
    farLines.pop();
    expect(farLines[0]).toBe("1000000|");
    expect(Buffer.byteLength(farLines.join("\n"))).toBeLessThanOrEqual(65_536);
  });

  it("cuts a first line whose prefix alone fills maxReadBytes to its prefix, and reads on", async () => {
    writeFileSync(ws("tiny.txt"), "abc\ndef\n");
    const { call } = setup({ maxReadBytes: 1 });
    expect(await read(call("read_file", { path: "tiny.txt", start_line: 2 }))).toEqual({
      text: "2|\n[cut: line 2 does not fit in the 1 bytes read_file returns per call and was cut; read on with start_line=3]",
      isError: false,
    });
  });

  it("reads a huge line and a far start_line with bounded memory (cut at maxReadBytes)", async () => {
    writeFileSync(ws("big.txt"), `${"x".repeat(3_000_000)}\n${"y\n".repeat(200_000)}last\n`);
    const { call } = setup({ maxReadBytes: 100 });
    const huge = await read(call("read_file", { path: "big.txt" }));
    expect(huge.text.length).toBeLessThan(300);
    expect(await read(call("read_file", { path: "big.txt", start_line: 200_002 }))).toEqual({
      text: "200002|last",
      isError: false,
    });
  });

  it("refuses a FIFO without blocking, and a directory", async () => {
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [ws("pipe.txt")]);
    const { call } = setup();
    expect(await read(call("read_file", { path: "pipe.txt" }))).toEqual({
      text: '"pipe.txt" is not a regular file',
      isError: true,
    });
  });
});

describe("read_file on an image", () => {
  it.each(Object.entries(TINY_IMAGES))(
    "returns a %s as an image part, its text naming path, type and size",
    async (_, image) => {
      const bytes = Buffer.from(image.data, "base64");
      // The name says nothing: the first bytes do.
      writeFileSync(ws("picture.dat"), bytes);
      const { call } = setup();
      const result = await call("read_file", { path: "picture.dat", start_line: 5 });
      expect(result.isError).toBe(false);
      expect(result.forLLM).toBe(`Image "picture.dat" (${image.mediaType}, ${bytes.length} bytes), attached.`);
      expect(result.parts).toEqual([{ type: "image", mediaType: image.mediaType, data: image.data }]);
    },
  );

  it("an image of exactly maxReadBytes is returned; one byte more is an error saying so", async () => {
    const bytes = Buffer.from(TINY_IMAGES.png.data, "base64");
    writeFileSync(ws("dot.png"), bytes);
    expect((await setup({ maxReadBytes: bytes.length }).call("read_file", { path: "dot.png" })).parts).toHaveLength(1);
    const over = await setup({ maxReadBytes: bytes.length - 1 }).call("read_file", { path: "dot.png" });
    expect(over.parts).toBeUndefined();
    expect(await read(Promise.resolve(over))).toEqual({
      text: `"dot.png" is an image (image/png, ${bytes.length} bytes) over the ${bytes.length - 1} bytes read_file returns per call`,
      isError: true,
    });
  });

  it("an image larger than one chunk (64 KiB) within the limit is returned whole", async () => {
    // A PNG with 100,000 bytes after its end: still a PNG by its first bytes.
    const bytes = Buffer.concat([Buffer.from(TINY_IMAGES.png.data, "base64"), Buffer.alloc(100_000, 7)]);
    writeFileSync(ws("big.png"), bytes);
    const result = await setup({ maxReadBytes: 200_000 }).call("read_file", { path: "big.png" });
    expect(result.forLLM).toBe(`Image "big.png" (image/png, ${bytes.length} bytes), attached.`);
    expect(result.parts).toEqual([{ type: "image", mediaType: "image/png", data: bytes.toString("base64") }]);
  });

  it("a file named .png that is no image is read as what it is: text, or a refused binary", async () => {
    writeFileSync(ws("fake.png"), "not an image\n");
    writeFileSync(ws("noise.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const { call } = setup();
    const text = await call("read_file", { path: "fake.png" });
    expect([text.forLLM, text.parts]).toEqual(["1|not an image", undefined]);
    expect(await read(call("read_file", { path: "noise.png" }))).toEqual({
      text: '"noise.png" looks like a binary file (NUL bytes or control characters): read_file only reads text',
      isError: true,
    });
  });

  it("an aborted call reads no image", async () => {
    writeFileSync(ws("dot.png"), Buffer.from(TINY_IMAGES.png.data, "base64"));
    const [readTool] = createFileTools({ workspace });
    const { createToolContext } = await import("../../src/testing/index.js");
    const result = (await readTool?.execute(
      { path: "dot.png" },
      createToolContext({ signal: AbortSignal.abort() }),
    )) as ToolResult;
    expect([result.contentForLLM(), result.isError, result.parts]).toEqual(["read_file aborted", true, undefined]);
  });
});
