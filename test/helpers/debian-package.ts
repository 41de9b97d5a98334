import { execFileSync } from "node:child_process";

function onPath(binary: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${binary}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function aptGet(args: string[]): void {
  execFileSync("apt-get", args, { stdio: "ignore", timeout: 600_000 });
}

/** What a test needs from Debian: a binary, the package that has it, and what needs it (for the message). */
export interface DebianBinary {
  /** The command looked up on PATH, e.g. `redis-server`. */
  binary: string;
  /** The Debian package that installs it. */
  packageName: string;
  /** Who needs it, e.g. "the toolloop/bullmq tests". */
  neededBy: string;
}

/**
 * `binary` on PATH, else installed with apt-get when this process is root (after an `apt-get
 * update` when the first try fails). Never skips: without it, throws with the exact command to run.
 */
export function debianBinary({ binary, packageName, neededBy }: DebianBinary): string {
  if (onPath(binary)) return binary;
  if (process.getuid?.() === 0 && onPath("apt-get")) {
    try {
      aptGet(["install", "-y", packageName]);
    } catch {
      try {
        aptGet(["update"]);
        aptGet(["install", "-y", packageName]);
      } catch {
        // reported below
      }
    }
    if (onPath(binary)) return binary;
  }
  throw new Error(`${neededBy} need a ${binary} on PATH; install it with: sudo apt-get install -y ${packageName}`);
}
