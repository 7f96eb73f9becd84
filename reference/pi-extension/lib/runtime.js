// @ts-check
// The extension's Python side, when no `pimem` is installed: a venv under
// `<agentDir>/memory-runtime/` (not under `memory/`, the index, which users may delete), into
// which pip installs the Python package this Pi package ships, with the versions pinned in
// python-constraints.txt. It runs in the background, once: a stamp says what was installed, and
// a lock folder keeps two Pis from installing at the same time.

import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, openSync, closeSync } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The Pi package's root: the folder with pyproject.toml (the checkout, or the npm package). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CONSTRAINTS = join(PACKAGE_ROOT, "reference", "pi-extension", "python-constraints.txt");
/** Python versions tried, newest first; `python3` last, whatever it is. */
const PYTHONS = ["python3.14", "python3.13", "python3.12", "python3.11", "python3"];
/** A lock older than this belongs to an install that died. */
const STALE_LOCK_MS = 20 * 60 * 1000;
const POLL_MS = 1000;
/** pip gets this long (downloads included) before the install counts as failed. */
const INSTALL_TIMEOUT_MS = 15 * 60 * 1000;

/** What to tell a user without a usable Python. */
export const NO_PYTHON =
  "Memory is off: it needs Python 3.11 or newer with venv (Debian/Ubuntu: apt install python3 python3-venv; " +
  "macOS: brew install python), then restart Pi. Or install pimem yourself and set memory.command.";

/** Raised while the runtime is being installed, or when it cannot be. */
export class RuntimeUnavailable extends Error {
  /**
   * @param {string} message
   * @param {boolean} pending true while an install is under way
   */
  constructor(message, pending) {
    super(message);
    this.name = "RuntimeUnavailable";
    this.pending = pending;
  }
}

/**
 * The folder of the installed runtime.
 * @param {string} agentDir
 */
export function runtimeDir(agentDir) {
  return join(agentDir, "memory-runtime");
}

/**
 * An executable named `name` on `PATH`, or undefined.
 * @param {string} name
 * @param {NodeJS.ProcessEnv} env
 */
export function onPath(name, env) {
  for (const folder of (env.PATH ?? "").split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, name);
    try {
      closeSync(openSync(candidate, "r"));
      return candidate;
    } catch {
      // not there, or not readable: the next folder
    }
  }
  return undefined;
}

/** What the stamp records: the package installed and the pins it was installed with. */
async function wanted() {
  const pins = await readFile(CONSTRAINTS, "utf8");
  const project = await readFile(join(PACKAGE_ROOT, "pyproject.toml"), "utf8");
  const version = /^version\s*=\s*"([^"]+)"/m.exec(project)?.[1] ?? "unknown";
  const digest = createHash("sha256").update(pins).update(project).digest("hex").slice(0, 16);
  return { version, digest };
}

/**
 * The installed runtime's `pimem` argv prefix, when its stamp matches what this package ships.
 * @param {string} agentDir
 * @returns {Promise<string[] | undefined>}
 */
export async function installedRuntime(agentDir) {
  const dir = runtimeDir(agentDir);
  const pimem = join(dir, "venv", "bin", "pimem");
  try {
    const stamp = JSON.parse(await readFile(join(dir, "installed.json"), "utf8"));
    const want = await wanted();
    if (stamp.digest === want.digest && existsSync(pimem)) return [pimem];
  } catch {
    // no stamp (or an unreadable one): not installed
  }
  return undefined;
}

/**
 * The first Python >= 3.11 with venv and ensurepip, or undefined.
 * @param {NodeJS.ProcessEnv} env
 */
export async function findPython(env) {
  const check = "import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)";
  for (const name of PYTHONS) {
    const python = onPath(name, env);
    if (!python) continue;
    const ok = await new Promise((done) => {
      execFile(python, ["-c", check], { env, timeout: 20000 }, (error) => done(!error));
    });
    if (ok) return python;
  }
  return undefined;
}

/**
 * @param {string} lock
 * @returns {Promise<boolean>} whether the process that took the lock is gone (or too old)
 */
async function abandoned(lock) {
  const age = Date.now() - (await stat(lock).then((info) => info.mtimeMs, () => 0));
  const pid = Number(await readFile(join(lock, "pid"), "utf8").catch(() => "0"));
  if (!pid) return age > 10_000; // a lock just taken, its pid not written yet
  try {
    process.kill(pid, 0); // throws when there is no such process
    return age > STALE_LOCK_MS;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code !== "EPERM";
  }
}

/**
 * Takes the install lock, or waits while another live process holds it; false when another
 * process finished meanwhile (its runtime is there).
 * @param {string} lock
 * @param {string} agentDir
 */
async function lockOrWait(lock, agentDir) {
  for (;;) {
    try {
      await mkdir(lock);
      await writeFile(join(lock, "pid"), String(process.pid));
      return true;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
    }
    if (await installedRuntime(agentDir)) return false;
    // A Pi that quit mid-install (a -p run) leaves its lock: the next one starts over.
    if (await abandoned(lock)) await rm(lock, { recursive: true, force: true });
    else await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/**
 * The install itself, as one detached shell process: it outlives a Pi that quits meanwhile (a
 * `pi -p` run), writes the stamp when pip is done, and always gives the lock back.
 */
const INSTALL_SCRIPT = [
  '"$PYTHON" -m venv "$VENV"',
  '"$VENV/bin/python" -m pip install --quiet "$PACKAGE"',
  'printf "%s\\n" "$STAMP" > "$STAMP_FILE.tmp" && mv "$STAMP_FILE.tmp" "$STAMP_FILE"',
].join(" && ");

/**
 * Installs the runtime (venv, pip install of the shipped package with pinned versions).
 * @param {string} agentDir
 * @param {NodeJS.ProcessEnv} env
 * @param {(message: string, level: "info" | "warning" | "error") => void} notify
 * @returns {Promise<string[]>} the `pimem` argv prefix
 */
export async function installRuntime(agentDir, env, notify) {
  const python = await findPython(env);
  if (!python) throw new RuntimeUnavailable(NO_PYTHON, false);
  const dir = runtimeDir(agentDir);
  await mkdir(dir, { recursive: true });
  const lock = join(dir, "install.lock");
  if (!(await lockOrWait(lock, agentDir))) return /** @type {string[]} */ (await installedRuntime(agentDir));
  const log = join(dir, "install.log");
  const venv = join(dir, "venv");
  notify("Memory: installing its Python side in the background (once; about a minute).", "info");
  await rm(venv, { recursive: true, force: true });
  await writeFile(log, `installing ${PACKAGE_ROOT} with ${python}\n`);
  const stamp = JSON.stringify({ ...(await wanted()), python });
  const logFd = openSync(log, "a");
  const child = spawn("/bin/sh", ["-c", `(${INSTALL_SCRIPT}); status=$?; rm -rf "$LOCK"; exit $status`], {
    detached: true,
    stdio: ["ignore", logFd, logFd],
    env: {
      ...env,
      // PIP_CONSTRAINT also pins what pip's isolated build environment installs (the build backend).
      PIP_CONSTRAINT: CONSTRAINTS,
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      PIP_NO_INPUT: "1",
      PYTHON: python,
      VENV: venv,
      PACKAGE: PACKAGE_ROOT,
      STAMP: stamp,
      STAMP_FILE: join(dir, "installed.json"),
      LOCK: lock,
    },
  });
  closeSync(logFd);
  if (child.pid) await writeFile(join(lock, "pid"), String(child.pid)); // the lock is the installer's now
  child.unref(); // Pi may quit before it is done
  const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), INSTALL_TIMEOUT_MS);
  timer.unref();
  const status = await new Promise((done) => {
    child.once("error", () => done(-1));
    child.once("exit", (code) => done(code));
  });
  clearTimeout(timer);
  const installed = await installedRuntime(agentDir);
  if (status === 0 && installed) {
    notify("Memory: its Python side is installed; memory_context works now.", "info");
    return installed;
  }
  const tail = (await readFile(log, "utf8").catch(() => "")).trim().split("\n").slice(-3).join(" ");
  throw new RuntimeUnavailable(`Memory is off: installing its Python side failed (${tail}); the log is ${log}.`, false);
}
