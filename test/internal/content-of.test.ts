import { describe, expect, it } from "vitest";
import type { ContentPart } from "../../src/content-part.js";
import { mediaResult, newToolResult, ToolResult } from "../../src/index.js";
import { contentOf, DEFAULT_MAX_RESULT_BYTES, messageContent, partsProblem } from "../../src/internal/content-of.js";

const png: ContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };

describe("contentOf", () => {
  it("is the result's text, or says why there is none", () => {
    expect(contentOf(newToolResult("hi"))).toBe("hi");
    expect(contentOf(new ToolResult({ forLLM: 3 as never }))).toBe("the tool's result has no text (got number)");
  });
});

describe("partsProblem", () => {
  it.each<[string, unknown, string | undefined]>([
    ["no parts", undefined, undefined],
    ["valid parts", [png], undefined],
    ["not an array", { length: 1 }, "parts must be an array, got object"],
    [
      "a bad part",
      [png, { type: "image", url: "ftp://a/b.png" }],
      "parts[1] url must be an http:, https: or gs: URL of at most 8,192 characters",
    ],
  ])("%s", (_case, parts, problem) => {
    expect(partsProblem(new ToolResult({ forLLM: "x", parts: parts as ContentPart[] }))).toBe(problem);
  });

  it("a getter that throws is a problem, bounded", () => {
    const result = new ToolResult({ forLLM: "x" });
    Object.defineProperty(result, "parts", {
      get() {
        throw new Error("e".repeat(100_000));
      },
    });
    const problem = partsProblem(result) ?? "";
    expect(problem.startsWith("parts cannot be read: eee")).toBe(true);
    expect(problem.length).toBeLessThan(5_000);
  });
});

describe("messageContent", () => {
  it("is the text alone without parts, the text then the parts with them", () => {
    expect(messageContent(newToolResult("x"), "x", DEFAULT_MAX_RESULT_BYTES)).toBe("x");
    expect(messageContent(new ToolResult({ forLLM: "x", parts: [] }), "x", DEFAULT_MAX_RESULT_BYTES)).toBe("x");
    expect(messageContent(mediaResult("x", [png]), "text", DEFAULT_MAX_RESULT_BYTES)).toEqual([
      { type: "text", text: "text" },
      png,
    ]);
  });

  it("parts that went unchecked (an async callback's, a custom registry's) are checked: bad ones become a note", () => {
    const result = new ToolResult({ forLLM: "x", parts: [{ type: "image", mediaType: "image/bmp", data: "" }] });
    expect(messageContent(result, "x", DEFAULT_MAX_RESULT_BYTES)).toBe(
      "x\n[images and files not shown: parts[0] an image's mediaType must be image/png, image/jpeg, image/gif or image/webp]",
    );
  });

  it("megabytes of base64 are read once: checked when the call ends, not again when its message is built", () => {
    let reads = 0;
    const data = "A".repeat(4 * 1024 * 1024);
    const part = {
      type: "image",
      mediaType: "image/png",
      get data() {
        reads++;
        return data;
      },
    };
    const result = new ToolResult({ forLLM: "x", parts: [part as unknown as ContentPart] });
    expect(partsProblem(result)).toBeUndefined();
    const afterCheck = reads;
    expect(afterCheck).toBeGreaterThan(0);
    const content = messageContent(result, "x", DEFAULT_MAX_RESULT_BYTES);
    expect(reads).toBe(afterCheck);
    expect(content).toEqual([{ type: "text", text: "x" }, part]);
  });

  describe("the message carries exactly the parts checked when the call ended", () => {
    const bmp = { type: "image", mediaType: "image/bmp", data: "" } as unknown as ContentPart;

    it.each<[string, (parts: ContentPart[]) => void]>([
      ["a part pushed", (parts) => parts.push(bmp)],
      ["a part replaced", (parts) => parts.splice(0, 1, bmp)],
      ["a part's data changed", (parts) => Object.assign(parts[0] as object, { data: "not base64!" })],
      ["a part's media type changed", (parts) => Object.assign(parts[0] as object, { mediaType: "text/html" })],
    ])("%s after the check", (_case, change) => {
      const parts: ContentPart[] = [{ ...png }];
      const result = new ToolResult({ forLLM: "x", parts });
      expect(partsProblem(result)).toBeUndefined();
      change(parts);
      expect(messageContent(result, "x", DEFAULT_MAX_RESULT_BYTES)).toStrictEqual([{ type: "text", text: "x" }, png]);
    });

    it("a getter that answers differently on a second read: the message holds the first answer, checked", () => {
      const answers = ["iVBORw0KGgo=", "<script>", "<script>"];
      const part = {
        type: "image",
        mediaType: "image/png",
        get data() {
          return answers.shift();
        },
      };
      const result = new ToolResult({ forLLM: "x", parts: [part as unknown as ContentPart] });
      expect(partsProblem(result)).toBeUndefined();
      const content = messageContent(result, "x", DEFAULT_MAX_RESULT_BYTES);
      expect(content).toStrictEqual([{ type: "text", text: "x" }, png]);
      expect(JSON.stringify(content)).not.toContain("script");
    });

    it("refuses more than 999 parts without reading or copying one", () => {
      let reads = 0;
      const many = new Proxy(new Array<unknown>(100_000).fill(png), {
        get(target, key, receiver) {
          if (typeof key === "string" && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver);
        },
      });
      const result = new ToolResult({ forLLM: "x", parts: many as ContentPart[] });
      expect(partsProblem(result)).toBe("parts holds 100000 parts; at most 999 are allowed");
      expect(reads).toBe(0);
    });
  });

  it("parts above maxBytes become a note with their size", () => {
    expect(messageContent(mediaResult("x", [png]), "x", 7)).toBe(
      "x\n[1 images or files not shown: 8 bytes, over maxResultBytes (7)]",
    );
    expect(DEFAULT_MAX_RESULT_BYTES).toBe(20 * 1024 * 1024);
  });
});
