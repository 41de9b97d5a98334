import { execFileSync } from "node:child_process";
import { debianBinary } from "./debian-package.js";

/**
 * The path of Debian's `chromium` for the browser tests (driven through playwright-core's
 * `executablePath`): the one on PATH, else installed with apt-get when this process is root.
 * Never skips: without one, it throws with the exact command to run.
 */
export function chromiumBinary(): string {
  const binary = debianBinary({
    binary: "chromium",
    packageName: "chromium",
    neededBy: "the browser tests (examples/web-chat)",
  });
  return execFileSync("sh", ["-c", `command -v ${binary}`], { encoding: "utf8" }).trim();
}
