import type { ToolDefinition } from "../provider.js";
import type { HiddenTools } from "./hidden-tools.js";
import type { RegisteredTool } from "./registered-tool.js";

/**
 * The registry's sorted visible names and their definitions in each format, built on first use and
 * kept, frozen, until {@link invalidate} (every registration change, and every change of which
 * hidden tools are promoted). The loop hands the cached arrays to providers as they are; adapters
 * cache their own conversions by the array's identity.
 */
export class DefinitionCache<Format extends string> {
  readonly #tools: ReadonlyMap<string, RegisteredTool>;
  readonly #hidden: HiddenTools;
  readonly #convert: (definitions: readonly ToolDefinition[], format: Format) => readonly unknown[];
  #names: readonly string[] | undefined;
  #definitions: readonly ToolDefinition[] | undefined;
  readonly #converted = new Map<Format, readonly unknown[]>();

  /** `convert` turns the OpenAI-shaped definitions into another format (the registry's `getDefinitions` formats). */
  constructor(
    tools: ReadonlyMap<string, RegisteredTool>,
    hidden: HiddenTools,
    convert: (definitions: readonly ToolDefinition[], format: Format) => readonly unknown[],
  ) {
    this.#tools = tools;
    this.#hidden = hidden;
    this.#convert = convert;
  }

  /** The names of the visible tools (hidden ones only while promoted), sorted (stable for prompt caching). */
  names(): readonly string[] {
    if (this.#names === undefined) {
      const hidden = this.#hidden;
      const names = [...this.#tools.keys()];
      this.#names = Object.freeze(
        (hidden.size === 0 ? names : names.filter((name) => !hidden.isConcealed(name))).sort(),
      );
    }
    return this.#names;
  }

  /** The definitions in `format`, in name order: one frozen array per format until the next change. */
  definitions(format: Format): readonly unknown[] {
    if (format === "openai") return this.#openAI();
    let converted = this.#converted.get(format);
    if (converted === undefined) {
      converted = Object.freeze(this.#convert(this.#openAI(), format));
      this.#converted.set(format, converted);
    }
    return converted;
  }

  /** Forgets everything built: the next read rebuilds from the tools. */
  invalidate(): void {
    this.#names = undefined;
    this.#definitions = undefined;
    this.#converted.clear();
  }

  #openAI(): readonly ToolDefinition[] {
    this.#definitions ??= Object.freeze(
      this.names().map((name) => (this.#tools.get(name) as RegisteredTool).definition),
    );
    return this.#definitions;
  }
}
