// @ts-check
// The Pi extension of the journal-index memory. It registers exactly what manifest.json declares
// and forwards every tool call, command and event to a `pimem serve` child process, which does all
// the work (spec/protocol.md). It adds nothing to the model's context: no prompt snippet, no
// guidelines, no messages, no entries, and it changes no tool, model or provider. It imports
// nothing from Pi (only types, in comments), so it loads on Pi 0.73.1 and on Pi 1.x alike.

import { readFileSync } from "node:fs";
import { LaunchError, ServerConnection, ServerExitError } from "./lib/connection.js";
import { installedRuntime, installRuntime, onPath, RuntimeUnavailable } from "./lib/runtime.js";
import {
  agentDirFrom,
  captureSession,
  configuredCommand,
  currentClock,
  flatSessionDirs,
  installHint,
  memoryEnabled,
  openWorkspace,
  readUserSettings,
} from "./lib/workspace.js";
import { canOpenBrowser, Viewer, viewerArgv } from "./lib/viewer.js";

/**
 * @typedef {{
 *   tools: Array<{name: string, label: string, description: string, parameters: Record<string, unknown>}>,
 *   commands: Array<{name: string, description: string}>,
 *   events: string[],
 *   calls: string[],
 * }} Manifest
 * @typedef {"info" | "warning" | "error"} NotifyLevel
 * @typedef {{
 *   cwd: string,
 *   hasUI: boolean,
 *   ui: {notify(message: string, level?: NotifyLevel): void},
 *   sessionManager: import("./lib/workspace.js").SessionView,
 * }} PiContext the part of Pi's ExtensionContext the extension uses
 * @typedef {{
 *   registerTool(definition: Record<string, unknown>): void,
 *   registerCommand(name: string, options: {description: string, handler: (args: string, ctx: PiContext) => Promise<void>}): void,
 *   on(event: string, handler: (event: Record<string, unknown>, ctx: PiContext) => void): void,
 * }} PiApi the part of Pi's ExtensionAPI the extension uses
 */

/** @type {Manifest} */
export const manifest = JSON.parse(readFileSync(new URL("./manifest.json", import.meta.url), "utf8"));

/** The protocol instance name: one Pi runtime is one instance. */
const INSTANCE = "pi";
/** The first start plus three restarts of a server that died. */
const MAX_LAUNCHES = 4;
const STOPPED_WITH_SESSION = "the memory server was stopped with the Pi session";
/**
 * What the model reads when the server cannot run: one short line, never a machine path (the
 * user gets the details, once, as a notification). The tool stays registered rather than being
 * withdrawn: in Pi 1.x pi.setActiveTools appends a system message the model sees (and a cache
 * miss) every time the tool set changes, which costs more than this line.
 */
export const UNAVAILABLE = "memory_context is unavailable: its server cannot run here (the user has been told why).";
export const SETTING_UP =
  "memory_context is being set up (a one-time install in the background); try again in a minute.";

/** A tool error the server answered: its message is meant for the model. */
class ToolAnswer extends Error {}

/** @type {Map<string, Promise<string[]>>} installs under way, per agent dir, across runtimes */
const installs = new Map();
/** Talks to one `pimem serve` for one Pi runtime (Pi runs the factory again for every session). */
class MemoryClient {
  /** @param {NodeJS.ProcessEnv} env */
  constructor(env) {
    this.env = env;
    /** @type {import("./lib/workspace.js").PiSession | undefined} */
    this.session = undefined;
    /** @type {((message: string, level: NotifyLevel) => void) | undefined} */
    this.notify = undefined;
    this.startReason = "startup";
    /** @type {ServerConnection | undefined} the server that completed its handshake */
    this.connection = undefined;
    /** @type {ServerConnection | undefined} the last server spawned, handshake done or not */
    this.spawned = undefined;
    /** @type {Promise<ServerConnection> | undefined} */
    this.starting = undefined;
    this.launches = 0;
    this.lastExit = "";
    /** @type {Error | undefined} set once the server cannot be had in this runtime; reported once */
    this.fatal = undefined;
    this.shutDown = false;
    /** `/memory view`'s `pimem view`, one at a time */
    this.viewer = new Viewer();
  }

  /**
   * Remembers plain data from a Pi context (contexts go stale when Pi replaces the session).
   * @param {PiContext} ctx
   */
  observe(ctx) {
    this.session = captureSession(ctx, this.env);
    const { hasUI, ui } = ctx;
    this.notify = (message, level) => {
      if (hasUI) ui.notify(message, level);
      else process.stderr.write(`[memory] ${message}\n`);
    };
  }

  /**
   * Pi's event handlers: they only start work and return nothing, so Pi never waits on the index.
   * @param {string} name
   * @param {Record<string, unknown>} event
   * @param {PiContext} ctx
   */
  onEvent(name, event, ctx) {
    if (name === "session_start") {
      this.observe(ctx);
      this.startReason = String(event.reason ?? "startup");
      // After /fork or /clone, session_start arrives twice: the second one joins the same start.
      if (this.connection?.running) this.sendEvent(name, this.sessionStartData());
      else this.ready().catch(() => {}); // failures are reported by ready() or by the next tool call
      return;
    }
    // Other events never start a server: the next tool call indexes the journal anyway.
    if (this.connection?.running) this.sendEvent(name, eventData(name, event));
    if (name === "session_shutdown") {
      this.shutDown = true;
      this.spawned?.stop(); // also a server still in its handshake
      this.viewer.stop();
    }
  }

  /**
   * Nobody waits for an event's answer; a server that died meanwhile is noticed by the next call.
   * @param {string} name
   * @param {Record<string, unknown>} data
   */
  sendEvent(name, data) {
    this.connection?.request({ cmd: "event", instance: INSTANCE, name, data }).catch(() => {});
  }

  sessionStartData() {
    const session = /** @type {import("./lib/workspace.js").PiSession} */ (this.session);
    return { reason: this.startReason, session_file: session.sessionFile, cwd: session.cwd };
  }

  /** The running server, started (or restarted) when needed. */
  ready() {
    if (this.connection?.running) return Promise.resolve(this.connection);
    this.starting ??= this.launch().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async launch() {
    if (this.fatal) throw this.fatal;
    if (this.shutDown) throw new Error(STOPPED_WITH_SESSION);
    if (this.launches >= MAX_LAUNCHES) {
      throw this.giveUp(`pimem serve stopped ${this.launches} times (${this.lastExit}); memory is off until Pi restarts.`);
    }
    // Every caller of ready() has observed a Pi context first.
    const session = /** @type {import("./lib/workspace.js").PiSession} */ (this.session);
    const settings = await readUserSettings(session.agentDir, session.cwd);
    const argv = [...(await this.serverCommand(session.agentDir, settings.memory)), "serve"];
    this.launches += 1; // a runtime still being installed is no launch
    /** @type {ServerConnection} */
    let connection;
    try {
      connection = await ServerConnection.launch(argv, { cwd: session.cwd });
    } catch (error) {
      if (error instanceof LaunchError) throw this.giveUp(`Memory is off: ${error.message}. ${installHint()}`);
      throw error;
    }
    this.spawned = connection;
    connection.onExit(() => {
      this.lastExit = connection.exitReason ?? "";
    });
    if (this.shutDown) {
      connection.stop();
      throw new Error(STOPPED_WITH_SESSION);
    }
    try {
      await connection.request({ cmd: "start", protocol: 1 });
      await connection.request({
        cmd: "open",
        instance: INSTANCE,
        workspace: openWorkspace(session, flatSessionDirs(session, settings.sessionDir, this.env)),
        clock: currentClock(),
        settings: {
          allow_global: settings.memory.allowGlobal,
          redact_patterns: settings.memory.redactPatterns,
          redact_allow: settings.memory.redactAllow,
        },
      });
      await connection.request({ cmd: "event", instance: INSTANCE, name: "session_start", data: this.sessionStartData() });
    } catch (error) {
      connection.stop();
      throw error;
    }
    this.connection = connection;
    return connection;
  }

  /**
   * The server command: $PIMEM_COMMAND, else the memory.command setting, else `pimem` on PATH,
   * else the runtime this extension installed; with none, the install starts in the background.
   * @param {string} agentDir
   * @param {import("./lib/workspace.js").MemorySettings} memory
   * @returns {Promise<string[]>}
   */
  async serverCommand(agentDir, memory) {
    const configured = configuredCommand(this.env, memory);
    if (configured) return configured;
    if (onPath("pimem", this.env)) return ["pimem"];
    const installed = await installedRuntime(agentDir);
    if (installed) return installed;
    if (!installs.has(agentDir)) {
      const notify = (/** @type {string} */ message, /** @type {NotifyLevel} */ level) => this.notify?.(message, level);
      const install = installRuntime(agentDir, this.env, notify);
      installs.set(agentDir, install);
      install.then(
        () => {
          if (!this.shutDown) this.ready().catch(() => {}); // index in the background right away
        },
        (error) => {
          installs.delete(agentDir);
          this.giveUp(error instanceof Error ? error.message : String(error));
        },
      );
    }
    throw new RuntimeUnavailable(SETTING_UP, true);
  }

  /**
   * Turns memory off for this runtime and tells the user once.
   * @param {string} message
   */
  giveUp(message) {
    this.fatal = new Error(message);
    this.notify?.(message, "error");
    return this.fatal;
  }

  /**
   * The tool's execute(): a tool error from the server is thrown, so Pi marks the result isError.
   * @param {string} name
   * @param {Record<string, unknown>} args
   * @param {AbortSignal | undefined} signal
   * @param {PiContext} ctx
   */
  async callTool(name, args, signal, ctx) {
    this.observe(ctx);
    try {
      try {
        return await this.callToolOnce(name, args, signal, leafOf(ctx));
      } catch (error) {
        // The tool only reads, so a call whose server died under it is safe to repeat once.
        if (!(error instanceof ServerExitError)) throw error;
        return await this.callToolOnce(name, args, signal, leafOf(ctx));
      }
    } catch (error) {
      if (error instanceof ToolAnswer || signal?.aborted) throw error;
      if (error instanceof RuntimeUnavailable && error.pending) throw new Error(SETTING_UP);
      throw new Error(UNAVAILABLE);
    }
  }

  /**
   * @param {string} name
   * @param {Record<string, unknown>} args
   * @param {AbortSignal | undefined} signal
   * @param {string | null} leafId where the model stands (search leaves out what it already sees)
   */
  async callToolOnce(name, args, signal, leafId) {
    const connection = await unlessAborted(this.ready(), signal);
    await connection.request({ cmd: "clock", instance: INSTANCE, now: currentClock().now }, signal);
    const request = { cmd: "tool", instance: INSTANCE, name, arguments: args, leafId };
    const response = await connection.request(request, signal);
    const error = /** @type {{code: string, message: string} | undefined} */ (response.error);
    if (error) throw new ToolAnswer(`${error.code}: ${error.message}`);
    return { content: response.content, details: response.details };
  }

  /**
   * The `/memory` command: the answer (or the error) is shown to the user as a notification.
   * @param {string} name
   * @param {string} args
   * @param {PiContext} ctx
   */
  async runCommand(name, args, ctx) {
    this.observe(ctx);
    const notify = /** @type {(message: string, level: NotifyLevel) => void} */ (this.notify);
    if (args.trim().split(/\s+/)[0] === "view") {
      await this.openViewer(ctx.hasUI).catch((error) => notify(error instanceof Error ? error.message : String(error), "error"));
      return;
    }
    try {
      const connection = await this.ready();
      await connection.request({ cmd: "clock", instance: INSTANCE, now: currentClock().now });
      const response = await connection.request({ cmd: "command", instance: INSTANCE, name, args: args.trim() });
      const error = /** @type {{code: string, message: string} | undefined} */ (response.error);
      if (error) notify(`/${name} ${args}: ${error.message}`, "error");
      else notify(String(response.text), "info");
    } catch (error) {
      notify(error instanceof Error ? error.message : String(error), "error");
    }
  }

  /**
   * `/memory view`: starts (or replaces) the viewer on the journals this memory reads. With a UI
   * on a desktop the viewer opens the browser itself; elsewhere (headless, over SSH) the URL,
   * which carries the token, is printed for the user to open.
   * @param {boolean} hasUI
   */
  async openViewer(hasUI) {
    const notify = /** @type {(message: string, level: NotifyLevel) => void} */ (this.notify);
    const session = /** @type {import("./lib/workspace.js").PiSession} */ (this.session);
    const settings = await readUserSettings(session.agentDir, session.cwd);
    const open = hasUI && canOpenBrowser(this.env);
    const argv = viewerArgv(
      await this.serverCommand(session.agentDir, settings.memory),
      session,
      flatSessionDirs(session, settings.sessionDir, this.env),
      open,
    );
    const { url, port } = await this.viewer.start(argv, { cwd: session.cwd, env: this.env });
    notify(
      open
        ? `Memory viewer opened in your browser (127.0.0.1:${port}, read-only); /memory view again replaces it.`
        : `Memory viewer (read-only), open: ${url}`,
      "info",
    );
  }
}

/**
 * The current session's leaf (`sessionManager.getLeafId()`, the same on Pi 0.73.1 and 1.x), or null
 * when the context has none or cannot say.
 * @param {PiContext} ctx
 * @returns {string | null}
 */
function leafOf(ctx) {
  try {
    const leaf = ctx?.sessionManager?.getLeafId?.();
    return typeof leaf === "string" ? leaf : null;
  } catch {
    return null;
  }
}

/**
 * Waits for `promise` unless Pi aborts the tool call first (a server that hangs while starting
 * must not hold the agent's turn).
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<T>}
 */
function unlessAborted(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error("memory_context cancelled"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The event's fields as the protocol's `data`. message_end carries only the role: the server reads
 * text from the journal (the only copy), and a message may hold megabytes of image data.
 * @param {string} name
 * @param {Record<string, unknown>} event
 */
function eventData(name, event) {
  const { type: _type, ...fields } = event;
  if (name === "message_end") {
    const message = /** @type {{role?: unknown} | undefined} */ (event.message);
    return { message: { role: message?.role } };
  }
  return fields;
}

/**
 * Pi's extension factory.
 * @param {PiApi} pi
 */
export default function memoryExtension(pi) {
  // `"memory": {"enabled": false}` in the user's or the project's settings: nothing is registered.
  if (!memoryEnabled(agentDirFrom(process.env), process.cwd())) return;
  const client = new MemoryClient(process.env);
  for (const tool of manifest.tools) {
    pi.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      parameters: tool.parameters,
      /**
       * @param {string} _toolCallId
       * @param {Record<string, unknown>} params
       * @param {AbortSignal | undefined} signal
       * @param {unknown} _onUpdate
       * @param {PiContext} ctx
       */
      execute: (_toolCallId, params, signal, _onUpdate, ctx) => client.callTool(tool.name, params, signal, ctx),
    });
  }
  for (const command of manifest.commands) {
    pi.registerCommand(command.name, {
      description: command.description,
      handler: (args, ctx) => client.runCommand(command.name, args, ctx),
    });
  }
  for (const name of manifest.events) {
    pi.on(name, (event, ctx) => {
      client.onEvent(name, event, ctx);
    });
  }
}
