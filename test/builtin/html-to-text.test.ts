import { describe, expect, it } from "vitest";
import { htmlToText, MAX_CONVERTERS, runningConverters } from "../../src/builtin/html-to-text.js";

describe("htmlToText (the converter worker)", () => {
  it("runs at most MAX_CONVERTERS workers at once; waiting and aborted calls leak no slot", async () => {
    const deep = `${"<div>".repeat(100_000)}x${"</div>".repeat(100_000)}`;
    const controller = new AbortController();
    const pending = Array.from({ length: 5 }, () =>
      htmlToText(deep, controller.signal).catch((error: unknown) => error),
    );
    let most = 0;
    const watch = setInterval(() => {
      most = Math.max(most, runningConverters());
    }, 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort(new Error("enough"));
    const outcomes = await Promise.all(pending);
    clearInterval(watch);
    expect(MAX_CONVERTERS).toBe(2);
    expect(most).toBe(2);
    expect(outcomes.every((outcome) => outcome instanceof Error && outcome.message === "enough")).toBe(true);
    expect(runningConverters()).toBe(0);
    // The slots are free again.
    expect(await htmlToText("<p>after</p>", new AbortController().signal)).toEqual({
      text: "after",
      length: 5,
      blank: false,
    });
    expect(runningConverters()).toBe(0);
  });

  it("gives the queued calls their turn in order", async () => {
    const signal = new AbortController().signal;
    const results = await Promise.all(["a", "b", "c", "d"].map((text) => htmlToText(`<b>${text}</b>`, signal)));
    expect(results.map((result) => result.text)).toEqual(["a", "b", "c", "d"]);
    expect(runningConverters()).toBe(0);
  });

  it("sends back only the first maxChars characters of the text, and its whole length", async () => {
    // 60 nested lists around 1,500 lines: 1.8 M characters of text, which the event loop once
    // received whole (40 M from a 100 KB page: 0.5 s of the loop, 333 MB) to show 50,000 of them.
    const page = `<html><body>${'<ol start="1.2345678901234567"><li>'.repeat(60)}${"x<br>".repeat(1_500)}</body></html>`;
    const converted = await htmlToText(page, new AbortController().signal, 1_000);
    expect(converted.text.length).toBe(1_000);
    expect(converted.text.startsWith(" 1.2345678901234567. 1.2345678901234567. ")).toBe(true);
    expect(converted.length).toBeGreaterThan(1_500_000);
    expect(converted.blank).toBe(false);
    expect(await htmlToText("<p> </p><div>\n</div>", new AbortController().signal, 1)).toEqual({
      text: "",
      length: 0,
      blank: true,
    });
  });
});
