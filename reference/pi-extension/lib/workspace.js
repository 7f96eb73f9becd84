// @ts-check
// What the extension tells `pimem serve` about Pi: where journals live, the current session and
// the user's settings. Everything is read from Pi's own configuration, never from tool arguments.

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/**
 * The subset of Pi's ReadonlySessionManager the extension reads.
 * @typedef {{getSessionFile(): string | undefined, getSessionDir(): string, getCwd(): string, getLeafId?(): string | null}} SessionView
 */

/**
 * Plain data captured from a Pi context; Pi's context objects go stale when a session is replaced.
 * @typedef {{home: string, agentDir: string, cwd: string, sessionFile: string | undefined, sessionDir: string}} PiSession
 */

/**
 * The user's memory settings, from the `memory` key of `<agentDir>/settings.json`; the redaction
 * patterns also from the project's `.pi/settings.json`.
 * @typedef {{allowGlobal: boolean, command: string[] | undefined, redactPatterns: unknown[], redactAllow: unknown[]}} MemorySettings
 */


/**
 * Expands a leading "~" like Pi does for its directory settings.
 * @param {string} path
 */
function expandHome(path) {
  if (path === "~") return homedir();
  return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

/**
 * Pi's agent dir: $PI_CODING_AGENT_DIR if set, else ~/.pi/agent (Pi's own rule, pi-platform §1).
 * @param {NodeJS.ProcessEnv} env
 */
export function agentDirFrom(env) {
  return env.PI_CODING_AGENT_DIR ? expandHome(env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent");
}

/**
 * @param {{cwd: string, sessionManager: SessionView}} ctx a Pi ExtensionContext
 * @param {NodeJS.ProcessEnv} env
 * @returns {PiSession}
 */
export function captureSession(ctx, env) {
  return {
    home: homedir(),
    agentDir: agentDirFrom(env),
    cwd: ctx.cwd,
    sessionFile: ctx.sessionManager.getSessionFile(),
    sessionDir: ctx.sessionManager.getSessionDir(),
  };
}

/**
 * A settings file as an object ({} when there is none, or one Pi itself would reject).
 * @param {string} path
 * @returns {Promise<Record<string, unknown>>}
 */
async function readSettingsFile(path) {
  try {
    const parsed = JSON.parse(await readFile(path, "utf8"));
    return parsed && typeof parsed === "object" ? parsed : {};
  } catch {
    return {};
  }
}

/**
 * `memory.redact.<key>` of a settings object, as a list ([] when absent).
 * @param {Record<string, unknown>} settings
 * @param {"patterns" | "allow"} key
 * @returns {unknown[]}
 */
function redactList(settings, key) {
  const memory = /** @type {Record<string, unknown>} */ (settings.memory ?? {});
  const redact = /** @type {Record<string, unknown>} */ (memory.redact ?? {});
  const list = redact[key];
  return Array.isArray(list) ? list : [];
}

/**
 * Reads `<agentDir>/settings.json`. Only the user's global file counts: a project's
 * `.pi/settings.json` comes with the repository and must not widen what the memory may show,
 * nor weaken redaction. It may only add redaction patterns (`memory.redact.patterns`); the
 * allowlist (`memory.redact.allow`) is the user's own.
 * @param {string} agentDir
 * @param {string} [cwd] the project, whose `.pi/settings.json` may add redaction patterns
 * @returns {Promise<{memory: MemorySettings, sessionDir: string | undefined}>}
 */
export async function readUserSettings(agentDir, cwd) {
  const settings = await readSettingsFile(join(agentDir, "settings.json"));
  const project = cwd === undefined ? {} : await readSettingsFile(join(cwd, ".pi", "settings.json"));
  const memory = /** @type {Record<string, unknown>} */ (settings.memory ?? {});
  const command = memory.command;
  return {
    memory: {
      allowGlobal: memory.allowGlobal === true,
      command: typeof command === "string" ? [command] : isStringList(command) ? command : undefined,
      redactPatterns: [...redactList(settings, "patterns"), ...redactList(project, "patterns")],
      redactAllow: redactList(settings, "allow"),
    },
    sessionDir: typeof settings.sessionDir === "string" ? settings.sessionDir : undefined,
  };
}

/**
 * @param {unknown} value
 * @returns {value is string[]}
 */
function isStringList(value) {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string");
}

/**
 * The server command the user chose: $PIMEM_COMMAND (one executable path), else the
 * `memory.command` setting (a path or an argv list); undefined when neither is set.
 * @param {NodeJS.ProcessEnv} env
 * @param {MemorySettings} memory
 */
export function configuredCommand(env, memory) {
  return env.PIMEM_COMMAND ? [env.PIMEM_COMMAND] : memory.command;
}

/**
 * @param {string} path
 * @returns {unknown} the file's `memory.enabled`, or undefined
 */
function enabledIn(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"))?.memory?.enabled;
  } catch {
    return undefined; // no file, or one Pi itself would reject
  }
}

/**
 * False when `"memory": {"enabled": false}` is in the user's `<agentDir>/settings.json` or in the
 * project's `.pi/settings.json`. A project may turn the memory off (that only narrows what the
 * model sees), never on; read synchronously, since Pi's extension factory decides what to register.
 * @param {string} agentDir
 * @param {string} cwd
 */
export function memoryEnabled(agentDir, cwd) {
  return enabledIn(join(agentDir, "settings.json")) !== false && enabledIn(join(cwd, ".pi", "settings.json")) !== false;
}

/**
 * Flat session dirs (Pi's --session-dir, $PI_CODING_AGENT_SESSION_DIR, `sessionDir` setting).
 * The current session's own dir counts when it is not the default `<agentDir>/sessions/<cwd>/`.
 * @param {PiSession} session
 * @param {string | undefined} settingsSessionDir
 * @param {NodeJS.ProcessEnv} env
 */
export function flatSessionDirs(session, settingsSessionDir, env) {
  const candidates = [env.PI_CODING_AGENT_SESSION_DIR, settingsSessionDir].filter(
    /** @returns {dir is string} */ (dir) => typeof dir === "string" && dir.length > 0,
  );
  const dirs = candidates.map((dir) => resolve(expandHome(dir)));
  if (dirname(resolve(session.sessionDir)) !== resolve(session.agentDir, "sessions")) {
    dirs.unshift(resolve(session.sessionDir));
  }
  return [...new Set(dirs)];
}

/**
 * The `open` request's workspace (spec/protocol.md).
 * @param {PiSession} session
 * @param {string[]} sessionDirs
 */
export function openWorkspace(session, sessionDirs) {
  // The same folder the `pimem` command line uses by default, so both see one index.
  const stateDir = join(session.agentDir, "memory");
  return {
    home: session.home,
    agent_dir: session.agentDir,
    session_dirs: sessionDirs,
    state_dir: stateDir,
    cwd: session.cwd,
    // --no-session: there is no current journal; a path that never exists stands for it.
    session_file: session.sessionFile ?? join(stateDir, "no-session.jsonl"),
  };
}

/** The wall clock for the server; Pi has no other. */
export function currentClock() {
  return {
    now: new Date().toISOString(),
    tz: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
  };
}

/** The hint shown to the user (never to the model) when the configured command cannot start. */
export function installHint() {
  return "Fix PIMEM_COMMAND or the memory.command setting, or unset both: the extension then installs its own.";
}
