import { describe, expect, it } from "vitest";
import { takeTurn, waitingTurns, workspacesInTurn } from "../../src/builtin/workspace-turns.js";

describe("takeTurn", () => {
  it("lets commands take their turns together, and an extraction only alone, in the order asked", () => {
    const a = takeTurn("/w", false);
    const b = takeTurn("/w", false);
    const extraction = takeTurn("/w", true);
    const later = takeTurn("/w", false);
    const elsewhere = takeTurn("/other", true);
    const held = () =>
      Object.entries({ a, b, extraction, later, elsewhere }).flatMap(([name, turn]) => (turn.held ? [name] : []));
    expect(held()).toEqual(["a", "b", "elsewhere"]);
    expect(waitingTurns("/w")).toBe(2);
    a.end();
    expect(held()).toEqual(["b", "elsewhere"]);
    b.end();
    // The extraction now, alone: the command asked after it still waits.
    expect(held()).toEqual(["extraction", "elsewhere"]);
    extraction.end();
    expect(held()).toEqual(["later", "elsewhere"]);
    later.end();
    elsewhere.end();
    expect(workspacesInTurn()).toBe(0);
  });

  it("resolves granted once the turn comes", async () => {
    const first = takeTurn("/w", true);
    const second = takeTurn("/w", false);
    let granted = false;
    void second.granted.then(() => {
      granted = true;
    });
    await Promise.resolve();
    expect(granted).toBe(false);
    first.end();
    await second.granted;
    expect(second.held).toBe(true);
    second.end();
    expect(workspacesInTurn()).toBe(0);
  });

  it("gives up a wait, and ends a turn, once however often end is called", () => {
    const first = takeTurn("/w", true);
    const gaveUp = takeTurn("/w", true);
    const third = takeTurn("/w", false);
    gaveUp.end();
    gaveUp.end();
    expect(waitingTurns("/w")).toBe(1);
    first.end();
    first.end();
    expect(third.held).toBe(true);
    expect(gaveUp.held).toBe(false);
    third.end();
    expect(workspacesInTurn()).toBe(0);
  });
});
