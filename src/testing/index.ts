export { createToolContext } from "./create-tool-context.js";
export type {
  ScriptedCall,
  ScriptedProviderOptions,
  ScriptedResponder,
  ScriptedResponse,
  ScriptedToolCall,
  ScriptStep,
} from "./scripted-provider.js";
export {
  ScriptedProvider,
  textResponse,
  toolCallResponse,
} from "./scripted-provider.js";
