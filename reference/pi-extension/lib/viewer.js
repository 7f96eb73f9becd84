// @ts-check
// `/memory view`: the memory viewer, `pimem view`, a read-only page on 127.0.0.1. One per Pi
// runtime: it never holds Pi open (child.unref()), dies with the session (killed on
// session_shutdown, and it watches Pi's pid itself), and running the command again replaces it.

import { spawn } from "node:child_process";

/** The line `pimem view` prints once: the URL with this run's token. */
const URL_LINE = /pimem view: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=[A-Za-z0-9_-]+)/;
/** How long the viewer gets to print its URL (it indexes in the background, not before). */
const START_TIMEOUT_MS = 30000;
const STDERR_TAIL_CHARS = 1000;

/**
 * Whether a browser can be opened on this machine: a desktop session, not a remote shell.
 * @param {NodeJS.ProcessEnv} env
 * @param {NodeJS.Platform} platform
 */
export function canOpenBrowser(env, platform = process.platform) {
  const remote = Boolean(env.SSH_CONNECTION || env.SSH_TTY);
  if (platform === "darwin" || platform === "win32") return !remote;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * The viewer's argv: the same journals, project and session the memory server is given, and
 * nothing from settings files the extension does not read itself (--exact-dirs).
 * @param {string[]} command the pimem command (PIMEM_COMMAND, the memory.command setting or pimem)
 * @param {import("./workspace.js").PiSession} session
 * @param {string[]} sessionDirs
 * @param {boolean} open
 */
export function viewerArgv(command, session, sessionDirs, open) {
  const argv = [...command, "--agent-dir", session.agentDir, "--cwd", session.cwd];
  for (const dir of sessionDirs) argv.push("--sessions-dir", dir);
  if (session.sessionFile) argv.push("--session", session.sessionFile);
  argv.push("view", "--exact-dirs", "--parent", String(process.pid));
  if (open) argv.push("--open");
  return argv;
}

export class Viewer {
  constructor() {
    /** @type {import("node:child_process").ChildProcess | undefined} */
    this.child = undefined;
  }

  /**
   * Starts a viewer (stopping the one running) and resolves with its URL once it printed it.
   * @param {string[]} argv
   * @param {{cwd: string, env: NodeJS.ProcessEnv}} options
   * @returns {Promise<{url: string, port: number}>}
   */
  start(argv, options) {
    this.stop();
    const child = spawn(argv[0], argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    // Pi is never held open by the viewer: not by the process, and not by its pipes, except by
    // stdout until the URL arrives (the command is waiting for it).
    child.unref();
    /** @type {any} */ (child.stderr)?.unref?.();
    const release = () => /** @type {any} */ (child.stdout)?.unref?.();
    return new Promise((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      const fail = (/** @type {string} */ why) => {
        clearTimeout(timer);
        release();
        if (this.child === child) this.stop();
        reject(new Error(`pimem view ${why}${stderr ? `: ${stderr.trim()}` : ""}`));
      };
      const timer = setTimeout(() => fail(`printed no URL within ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
      timer.unref();
      child.stdout?.setEncoding("utf8").on("data", (chunk) => {
        stdout += chunk;
        const found = URL_LINE.exec(stdout);
        if (found) {
          clearTimeout(timer);
          release();
          resolve({ url: found[1], port: Number(found[2]) });
        }
      });
      child.stderr?.setEncoding("utf8").on("data", (chunk) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
      });
      child.once("error", (error) => fail(`cannot start (${error.message})`));
      child.once("exit", (code, signal) => {
        if (this.child === child) this.child = undefined;
        fail(`exited (${signal ?? `code ${code}`}) before it printed its URL`);
      });
    });
  }

  /** Stops the running viewer, if any. */
  stop() {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
}
