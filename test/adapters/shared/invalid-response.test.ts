import { describe, expect, it } from "vitest";
import { errorBodyProblem, invalidResponse, quoted } from "../../../src/adapters/shared/invalid-response.js";
import { InvalidProviderResponseError, isInvalidProviderResponseError } from "../../../src/index.js";

describe("invalidResponse", () => {
  it("names the provider in the message and on the error, and keeps a bounded excerpt of the body", () => {
    const cause = new Error("stream cut");
    const error = invalidResponse({
      provider: "Ollama",
      problem: "the stream ended without any chunk",
      body: { text: "x".repeat(5_000) },
      cause,
    });

    expect(error).toBeInstanceOf(InvalidProviderResponseError);
    expect(isInvalidProviderResponseError(error)).toBe(true);
    expect(error.message).toBe("Ollama: the stream ended without any chunk");
    expect(error.provider).toBe("Ollama");
    expect(error.cause).toBe(cause);
    expect(error.body.length).toBeLessThanOrEqual(2_000);
    expect(error.body.startsWith('{"text":"xxx')).toBe(true);
  });

  it("sets no cause when there is none", () => {
    expect(Object.hasOwn(invalidResponse({ provider: "Gemini", problem: "p", body: {} }), "cause")).toBe(false);
  });
});

describe("errorBodyProblem", () => {
  it.each<[string, unknown, string | undefined]>([
    [
      "OpenAI's error body",
      { error: { message: "The server had an error", type: "server_error", code: null } },
      "the response is an error (server_error: The server had an error)",
    ],
    [
      "Anthropic's error body",
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      "the response is an error (overloaded_error: Overloaded)",
    ],
    [
      "Google's error body",
      { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } },
      "the response is an error (UNAVAILABLE: The model is overloaded.)",
    ],
    ["an error code only", { error: { code: 500 } }, "the response is an error (500)"],
    ["Ollama's error text", { error: "model not found" }, "the response is an error (model not found)"],
    ["type error without details", { type: "error" }, "the response is an error"],
    ["an ordinary response with error: null", { output: [], error: null }, undefined],
    ["an object without error", {}, undefined],
    ["not an object", "oops", undefined],
  ])("%s", (_name, body, expected) => {
    expect(errorBodyProblem(body)).toBe(expected);
  });

  it("bounds the API's text it quotes", () => {
    const problem = errorBodyProblem({ error: { message: "m".repeat(10_000) } }) ?? "";
    expect(problem.length).toBeLessThan(400);
    expect(problem).toMatch(/more characters cut\]\)$/);
  });
});

describe("quoted", () => {
  it.each<[unknown, string | undefined]>([
    ["text", "text"],
    ["", undefined],
    [42, "42"],
    [null, undefined],
    [{ message: "x" }, undefined],
  ])("%j → %j", (value, expected) => {
    expect(quoted(value)).toBe(expected);
  });
});
