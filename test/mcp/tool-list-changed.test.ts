import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, vi } from "vitest";
import { onToolListChanged } from "../../src/mcp/tool-list-changed.js";
import { startScriptedServer, toolList } from "../helpers/mcp-servers.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

async function notified(server: { toolsChanged(): void }): Promise<void> {
  server.toolsChanged();
  for (let index = 0; index < 5; index++) await tick();
}

describe("onToolListChanged", () => {
  it("fans one notification out to every subscriber of the client", async () => {
    const server = await startScriptedServer({});
    const first = vi.fn();
    const second = vi.fn();
    const offFirst = onToolListChanged(server.client, first);
    onToolListChanged(server.client, second);
    await notified(server);
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).toHaveBeenCalledTimes(1);
    offFirst();
    await notified(server);
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).toHaveBeenCalledTimes(2);
  });

  it("keeps calling a handler the user set before, and puts it back when the last subscriber leaves", async () => {
    const server = await startScriptedServer({});
    const own = vi.fn();
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, own);
    const listener = vi.fn();
    const off = onToolListChanged(server.client, listener);
    await notified(server);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(own).toHaveBeenCalledTimes(1);
    expect(own.mock.calls[0]?.[0]).toEqual({ method: "notifications/tools/list_changed" });
    off();
    await notified(server);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(own).toHaveBeenCalledTimes(2);
  });

  it("keeps the client's own listChanged option working (its handler is chained)", async () => {
    const onChanged = vi.fn();
    const server = await startScriptedServer(
      { listTools: () => toolList([{ name: "a" }]) },
      { listChanged: { tools: { onChanged, debounceMs: 0 } } },
    );
    const listener = vi.fn();
    onToolListChanged(server.client, listener);
    await notified(server);
    await vi.waitFor(() => expect(onChanged).toHaveBeenCalledTimes(1));
    expect(listener).toHaveBeenCalledTimes(1);
    expect(onChanged.mock.calls[0]?.[1]).toEqual([expect.objectContaining({ name: "a" })]);
  });

  it("removes its handler when the last subscriber leaves and there was none before", async () => {
    const server = await startScriptedServer({});
    const off = onToolListChanged(server.client, vi.fn());
    const handlers = Reflect.get(server.client, "_notificationHandlers") as Map<string, unknown>;
    expect(handlers.has("notifications/tools/list_changed")).toBe(true);
    off();
    off(); // twice: harmless
    expect(handlers.has("notifications/tools/list_changed")).toBe(false);
  });

  it("never removes a handler the user set after it; a later subscription chains that one", async () => {
    const server = await startScriptedServer({});
    const first = vi.fn();
    const offFirst = onToolListChanged(server.client, first);
    const later = vi.fn();
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, later);
    const second = vi.fn();
    const offSecond = onToolListChanged(server.client, second);
    await notified(server);
    expect(later).toHaveBeenCalledTimes(1);
    expect(first).toHaveBeenCalledTimes(1); // the listeners survive the re-installation
    expect(second).toHaveBeenCalledTimes(1);
    offFirst();
    offSecond();
    await notified(server);
    expect(later).toHaveBeenCalledTimes(2);
    expect(first).toHaveBeenCalledTimes(1);
  });

  it("never removes a handler the user set after it when its last subscriber leaves", async () => {
    const server = await startScriptedServer({});
    const off = onToolListChanged(server.client, vi.fn());
    const later = vi.fn();
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, later);
    off();
    await notified(server);
    expect(later).toHaveBeenCalledTimes(1);
  });

  it("a listener that throws does not cost the others their call", async () => {
    const server = await startScriptedServer({});
    const onerror = vi.fn();
    server.client.onerror = onerror;
    onToolListChanged(server.client, () => {
      throw new Error("boom");
    });
    const other = vi.fn();
    onToolListChanged(server.client, other);
    await notified(server);
    expect(other).toHaveBeenCalledTimes(1);
    expect(onerror).not.toHaveBeenCalled();
  });
});
