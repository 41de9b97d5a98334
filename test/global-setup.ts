import { chromiumBinary } from "./helpers/chromium.js";
import { redisServerBinary } from "./helpers/redis-server.js";

/**
 * Runs once, before any test file: provisions `redis-server` for the toolloop/bullmq tests and the
 * queued-tools example, and `chromium` for the browser test of examples/web-chat (each the one on
 * PATH, else Debian's, installed when this process is root, else a failure with the command to run). Once here, so that test files running in parallel never race
 * each other's `apt-get`.
 */
export default function setup(): void {
  redisServerBinary();
  chromiumBinary();
}
