import { describe, expect, it } from "vitest";
import { HiddenTools } from "../../src/internal/hidden-tools.js";

/** The names among `names` that are concealed now. */
const concealed = (hidden: HiddenTools, ...names: string[]) => names.filter((name) => hidden.isConcealed(name));

describe("HiddenTools", () => {
  it("adds concealed tools, in registration order, and forgets them", () => {
    const hidden = new HiddenTools();
    hidden.add("b");
    hidden.add("a");
    expect(hidden.size).toBe(2);
    expect([...hidden.names()]).toEqual(["b", "a"]);
    expect(hidden.has("a")).toBe(true);
    expect(hidden.has("c")).toBe(false);
    expect(concealed(hidden, "a", "b", "c")).toEqual(["a", "b"]);
    hidden.delete("a");
    hidden.delete("missing");
    expect([...hidden.names()]).toEqual(["b"]);
    expect(hidden.isConcealed("a")).toBe(false);
  });

  it("changes its version when a hidden tool is added or removed, not on promotions or ticks", () => {
    const hidden = new HiddenTools();
    const versions = [hidden.version];
    hidden.add("a");
    versions.push(hidden.version);
    hidden.promote(["a"], 2);
    hidden.tick();
    versions.push(hidden.version);
    hidden.delete("missing");
    versions.push(hidden.version);
    hidden.delete("a");
    versions.push(hidden.version);
    expect(versions[1]).not.toBe(versions[0]);
    expect(versions[2]).toBe(versions[1]);
    expect(versions[3]).toBe(versions[2]);
    expect(versions[4]).not.toBe(versions[3]);
  });

  it("promotes for ttl ticks, reporting only changes of visibility", () => {
    const hidden = new HiddenTools();
    hidden.add("a");
    hidden.add("b");
    expect(hidden.promote(["a"], 2)).toBe(true);
    expect(concealed(hidden, "a", "b")).toEqual(["b"]);
    // Promoting it again (another ttl) changes nothing visible.
    expect(hidden.promote(["a"], 3)).toBe(false);
    expect(hidden.tick()).toBe(false);
    expect(hidden.tick()).toBe(false);
    expect(hidden.isConcealed("a")).toBe(false);
    expect(hidden.tick()).toBe(true);
    expect(hidden.isConcealed("a")).toBe(true);
    // Nothing promoted: a tick changes nothing.
    expect(hidden.tick()).toBe(false);
  });

  it("ignores names that are not hidden tools, and ttl 0 conceals again", () => {
    const hidden = new HiddenTools();
    hidden.add("a");
    expect(hidden.promote(["nope", "__proto__", "constructor"], 5)).toBe(false);
    expect(hidden.has("nope")).toBe(false);
    expect(hidden.promote(["a"], 5)).toBe(true);
    expect(hidden.promote(["a"], 0)).toBe(true);
    expect(hidden.isConcealed("a")).toBe(true);
    expect(hidden.promote(["a"], 0)).toBe(false);
  });

  it("keeps __proto__ and constructor as plain names", () => {
    const hidden = new HiddenTools();
    hidden.add("__proto__");
    hidden.add("constructor");
    expect(hidden.isConcealed("__proto__")).toBe(true);
    expect(hidden.isConcealed("toString")).toBe(false);
    expect(hidden.promote(["__proto__"], 1)).toBe(true);
    expect(concealed(hidden, "__proto__", "constructor")).toEqual(["constructor"]);
    expect(({} as Record<string, unknown>).ttl).toBeUndefined();
  });

  it("re-adding a promoted tool conceals it again", () => {
    const hidden = new HiddenTools();
    hidden.add("a");
    hidden.promote(["a"], 3);
    hidden.add("a");
    expect(hidden.isConcealed("a")).toBe(true);
    expect(hidden.size).toBe(1);
  });

  it("does not tick a promotion made after the mark (the promoting round does not count)", () => {
    const hidden = new HiddenTools();
    hidden.add("early");
    hidden.add("late");
    hidden.promote(["early"], 1);
    const mark = hidden.mark();
    hidden.promote(["late"], 1);
    expect(hidden.tick(mark)).toBe(true);
    expect(concealed(hidden, "early", "late")).toEqual(["early"]);
    // The next round's mark covers it.
    expect(hidden.tick(hidden.mark())).toBe(true);
    expect(concealed(hidden, "early", "late")).toEqual(["early", "late"]);
  });

  it("a re-promotion during the round moves the tool past the mark", () => {
    const hidden = new HiddenTools();
    hidden.add("a");
    hidden.promote(["a"], 1);
    const mark = hidden.mark();
    hidden.promote(["a"], 1);
    expect(hidden.tick(mark)).toBe(false);
    expect(hidden.isConcealed("a")).toBe(false);
  });

  it("adopts another's tools and promotions as independent copies", () => {
    const original = new HiddenTools();
    original.add("a");
    original.add("b");
    original.promote(["a"], 2);
    const copy = new HiddenTools();
    copy.adopt(original);
    expect([...copy.names()]).toEqual(["a", "b"]);
    expect(concealed(copy, "a", "b")).toEqual(["b"]);
    expect(copy.mark()).toBe(original.mark());
    // A tick or promotion of one does not reach the other.
    copy.tick();
    copy.tick();
    expect(copy.isConcealed("a")).toBe(true);
    expect(original.isConcealed("a")).toBe(false);
    original.promote(["b"], 1);
    expect(copy.isConcealed("b")).toBe(true);
    copy.delete("b");
    expect(original.has("b")).toBe(true);
  });
});
