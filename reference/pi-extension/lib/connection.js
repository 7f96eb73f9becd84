// @ts-check
// One `pimem serve` child process and the JSON-lines adapter protocol spoken over its stdio
// (spec/protocol.md): one request per line, exactly one response per request, in order.

import { spawn } from "node:child_process";
import { getPriority, setPriority } from "node:os";

/** How much of the server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000;
/** How long a stopped server gets to exit on its own before it is killed. */
const STOP_GRACE_MS = 5000;
/** The server's nice value: background indexing yields the CPU to Pi itself. */
const SERVER_NICENESS = 10;

/**
 * @typedef {Record<string, unknown>} Message
 * @typedef {{resolve: (response: Message) => void, reject: (error: Error) => void}} Pending
 */

/** Raised when the server cannot be launched at all (for example the command is not installed). */
export class LaunchError extends Error {
  /**
   * @param {string} message
   * @param {string | undefined} code the errno code, such as "ENOENT"
   */
  constructor(message, code) {
    super(message);
    this.name = "LaunchError";
    this.code = code;
  }
}

/** Raised for a request whose server exited before answering it. */
export class ServerExitError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ServerExitError";
  }
}

export class ServerConnection {
  /**
   * Spawns the server; resolves once the process runs, rejects with LaunchError when it cannot start.
   * @param {string[]} argv the command and its arguments, `serve` included
   * @param {{cwd: string, env?: NodeJS.ProcessEnv}} options
   * @returns {Promise<ServerConnection>}
   */
  static launch(argv, options) {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new Promise((resolve, reject) => {
      child.once("spawn", () => {
        try {
          // Set before the server starts its indexing thread, which inherits it; never above Pi's
          // own priority (a Pi run niced further than this keeps its server as nice).
          setPriority(/** @type {number} */ (child.pid), Math.max(SERVER_NICENESS, getPriority()));
        } catch {
          // Not permitted here: the server runs at Pi's priority, which is only slower for Pi.
        }
        resolve(new ServerConnection(child));
      });
      child.once("error", (error) => {
        const code = /** @type {NodeJS.ErrnoException} */ (error).code;
        reject(new LaunchError(`cannot run ${JSON.stringify(argv[0])}: ${error.message}`, code));
      });
    });
  }

  /** @param {import("node:child_process").ChildProcessWithoutNullStreams} child */
  constructor(child) {
    this.child = child;
    this.nextSeq = 1;
    /** @type {Map<number, Pending>} */
    this.pending = new Map();
    this.stdoutBuffer = "";
    this.stderrTail = "";
    /** @type {string | null} why the process ended; null while it runs */
    this.exitReason = null;
    /** @type {Array<() => void>} */
    this.exitListeners = [];

    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (/** @type {string} */ chunk) => this.receive(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (/** @type {string} */ chunk) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A write to a server that just died must not crash Pi: the exit handler reports it instead.
    child.stdin.on("error", () => {});
    // If Pi exits without a session_shutdown, the server must not outlive it.
    const killOnExit = () => child.kill("SIGTERM");
    process.once("exit", killOnExit);
    child.once("exit", (code, signal) => {
      process.removeListener("exit", killOnExit);
      this.exitReason = signal ? `killed by ${signal}` : `exited with code ${code}`;
      const stderr = this.stderrTail.trim();
      const error = new ServerExitError(`pimem serve ${this.exitReason}${stderr ? `; its last output: ${stderr}` : ""}`);
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
      for (const listener of this.exitListeners) listener();
    });
  }

  get pid() {
    return this.child.pid;
  }

  get running() {
    return this.exitReason === null;
  }

  /** @param {() => void} listener called once when the process ends */
  onExit(listener) {
    this.exitListeners.push(listener);
  }

  /**
   * Sends one request and waits for its response. An `errored` adapter response rejects.
   * @param {Message} body the request without `seq`
   * @param {AbortSignal | undefined} [signal] stops waiting (the late response is then dropped)
   * @returns {Promise<Message>}
   */
  request(body, signal) {
    if (!this.running) return Promise.reject(new ServerExitError(`pimem serve ${this.exitReason}`));
    const seq = this.nextSeq++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.pending.delete(seq);
        reject(new Error(`request ${body.cmd} cancelled`));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(seq, {
        resolve: (response) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(response);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      this.child.stdin.write(`${JSON.stringify({ seq, ...body })}\n`);
    });
  }

  /**
   * Asks the server to stop and closes its stdin; kills it if it has not exited after a grace period.
   * Returns at once: Pi's shutdown never waits for the index.
   */
  stop() {
    if (!this.running) return;
    this.request({ cmd: "stop" }).catch(() => {});
    this.child.stdin.end();
    setTimeout(() => this.child.kill("SIGKILL"), STOP_GRACE_MS).unref();
  }

  /** @param {string} chunk */
  receive(chunk) {
    // Split on "\n" only: U+2028/U+2029 are valid inside JSON strings.
    this.stdoutBuffer += chunk;
    let newline = this.stdoutBuffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.stdoutBuffer.slice(0, newline).trim();
      this.stdoutBuffer = this.stdoutBuffer.slice(newline + 1);
      if (line) this.dispatch(line);
      newline = this.stdoutBuffer.indexOf("\n");
    }
  }

  /** @param {string} line */
  dispatch(line) {
    /** @type {Message} */
    let response;
    try {
      response = JSON.parse(line);
    } catch {
      this.stderrTail = `${this.stderrTail}\n[not a protocol line] ${line}`.slice(-STDERR_TAIL_CHARS);
      return;
    }
    const pending = this.pending.get(/** @type {number} */ (response.seq));
    if (!pending) return; // the caller stopped waiting (aborted tool call)
    this.pending.delete(/** @type {number} */ (response.seq));
    if (response.errored) {
      const context = /** @type {{message?: string}} */ (response.context ?? {});
      pending.reject(new Error(`pimem serve failed: ${context.message ?? "no message"}`));
    } else {
      pending.resolve(response);
    }
  }
}
