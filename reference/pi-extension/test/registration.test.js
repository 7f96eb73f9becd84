// @ts-check
// Loads the extension against a fake `pi` that records every call made on it, and drives it
// against test/fake-server.js. Run with `node --test` (no packages needed).

import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { getPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import memoryExtension, { manifest, SETTING_UP, UNAVAILABLE } from "../index.js";
import { NO_PYTHON } from "../lib/runtime.js";
import { fakeContext } from "./fake-context.js";

const FAKE_SERVER = fileURLToPath(new URL("./fake-server.js", import.meta.url));
const FAKE_PYTHON = fileURLToPath(new URL("./fake-python.js", import.meta.url));
chmodSync(FAKE_SERVER, 0o755);
chmodSync(FAKE_PYTHON, 0o755);

/** Events whose handlers could change what the model sees; the memory must not listen to them. */
const FORBIDDEN_EVENTS = [
  "context",
  "before_agent_start",
  "before_provider_request",
  "agent_end",
  "turn_end",
  "input",
  "tool_call",
  "tool_result",
];
const REGISTRATION_METHODS = ["registerTool", "registerCommand", "on"];

/**
 * A fake ExtensionAPI: every property read is recorded, and every method records its call.
 * @returns {{pi: any, calls: Array<{method: string, args: any[]}>}}
 */
function recordingPi() {
  /** @type {Array<{method: string, args: any[]}>} */
  const calls = [];
  const pi = new Proxy(
    {},
    {
      get(_target, property) {
        const method = String(property);
        return (/** @type {any[]} */ ...args) => {
          calls.push({ method, args });
        };
      },
    },
  );
  return { pi, calls };
}

/** @type {string} */
let workdir;
/** @type {string} */
let serverLog;
const savedEnv = { ...process.env };

beforeEach(() => {
  workdir = mkdtempSync(join(tmpdir(), "pimem-ext-"));
  serverLog = join(workdir, "server.log");
  mkdirSync(join(workdir, "agent", "sessions", "--proj--"), { recursive: true });
  mkdirSync(join(workdir, "proj"));
  process.env.PI_CODING_AGENT_DIR = join(workdir, "agent");
  process.env.PIMEM_COMMAND = FAKE_SERVER;
  process.env.FAKE_PIMEM_LOG = serverLog;
  delete process.env.PI_CODING_AGENT_SESSION_DIR;
  delete process.env.FAKE_PIMEM_EXIT_ON_TOOL;
  delete process.env.FAKE_PIMEM_SILENT_START;
  delete process.env.FAKE_PIMEM_DIE_ONCE;
});

/** session_shutdown handlers of every extension a test loaded, so no server outlives its test. */
/** @type {Function[]} */
let shutdowns = [];

afterEach(() => {
  for (const shutdown of shutdowns) shutdown({ type: "session_shutdown", reason: "quit" }, fakeContext(workdir).ctx);
  shutdowns = [];
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

/** Loads the extension and returns its registrations, keyed for the tests. */
function load() {
  const { pi, calls } = recordingPi();
  const returned = memoryExtension(pi);
  const tools = calls.filter((call) => call.method === "registerTool").map((call) => call.args[0]);
  const commands = calls.filter((call) => call.method === "registerCommand");
  /** @type {Map<string, Function>} */
  const handlers = new Map(calls.filter((call) => call.method === "on").map((call) => [call.args[0], call.args[1]]));
  const shutdown = handlers.get("session_shutdown");
  if (shutdown) shutdowns.push(shutdown);
  return { calls, returned, tools, commands, handlers };
}

/** @returns {Array<Record<string, any>>} */
function serverRequests() {
  try {
    return readFileSync(serverLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

/**
 * Waits (bounded) until the fake server's log satisfies `done`.
 * @param {(records: Array<Record<string, any>>) => boolean} done
 */
async function untilLogged(done) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    if (done(serverRequests())) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`the fake server never logged what was expected: ${JSON.stringify(serverRequests())}`);
}

test("registrations equal manifest.json, and nothing else is called on pi", () => {
  const { calls, returned, tools, commands, handlers } = load();
  assert.equal(returned, undefined);
  assert.deepEqual(
    tools.map(({ name, label, description, parameters }) => ({ name, label, description, parameters })),
    manifest.tools,
  );
  assert.deepEqual(
    commands.map((call) => ({ name: call.args[0], description: call.args[1].description })),
    manifest.commands,
  );
  assert.deepEqual([...handlers.keys()], manifest.events);
  const otherCalls = calls.map((call) => call.method).filter((method) => !REGISTRATION_METHODS.includes(method));
  assert.deepEqual(otherCalls, manifest.calls);
  assert.deepEqual(manifest.calls, []);
});

test("no handler on an event that could change the model's context", () => {
  const { handlers } = load();
  for (const event of FORBIDDEN_EVENTS) assert.equal(handlers.has(event), false, event);
  assert.deepEqual(manifest.events, ["session_start", "message_end", "session_compact", "session_tree", "session_shutdown"]);
});

test("the tool adds nothing to the system prompt and its description is short", () => {
  const { tools } = load();
  assert.equal(tools.length, 1);
  for (const tool of tools) {
    assert.equal("promptSnippet" in tool, false);
    assert.equal("promptGuidelines" in tool, false);
    assert.ok(tool.description.length <= 200, `${tool.description.length} chars`);
    assert.equal(typeof tool.execute, "function");
  }
});

test("handlers return nothing, and a tool call makes the round trip to the server", async () => {
  const { tools, handlers } = load();
  const { ctx } = fakeContext(workdir);
  const events = {
    session_start: { type: "session_start", reason: "startup" },
    message_end: { type: "message_end", message: { role: "user", content: [{ type: "text", text: "hi" }] } },
    session_compact: { type: "session_compact", compactionEntry: { id: "c1" }, fromExtension: false },
    session_tree: { type: "session_tree", newLeafId: "a", oldLeafId: "b" },
  };
  for (const [name, event] of Object.entries(events)) {
    assert.equal(/** @type {Function} */ (handlers.get(name))(event, ctx), undefined, name);
  }
  const result = await tools[0].execute("call-1", { action: "search", query: "needle" }, undefined, undefined, ctx);
  assert.deepEqual(result, {
    content: [{ type: "text", text: 'fake memory_context {"action":"search","query":"needle"}' }],
    details: { arguments: { action: "search", query: "needle" } },
  });
  assert.equal(/** @type {Function} */ (handlers.get("session_shutdown"))({ reason: "quit" }, ctx), undefined);
  await untilLogged((records) => records.some((record) => record.fake === "stdin closed" || record.cmd === "stop"));

  const started = serverRequests().find((record) => record.fake === "started");
  assert.equal(started?.priority, Math.max(10, getPriority()), "the server runs niced, below Pi");
  const requests = serverRequests().filter((record) => record.cmd);
  assert.deepEqual(requests.map((request) => request.cmd), ["start", "open", "event", "clock", "tool", "event", "stop"]);
  const [start, open, sessionStart, , tool, shutdown] = requests;
  assert.equal(start.protocol, 1);
  assert.deepEqual(open.workspace, {
    home: open.workspace.home,
    agent_dir: join(workdir, "agent"),
    session_dirs: [],
    state_dir: join(workdir, "agent", "memory"),
    cwd: join(workdir, "proj"),
    session_file: join(workdir, "agent", "sessions", "--proj--", "s1.jsonl"),
  });
  assert.deepEqual(open.settings, { allow_global: false, redact_patterns: [], redact_allow: [] });
  assert.deepEqual(sessionStart.data, {
    reason: "startup",
    session_file: open.workspace.session_file,
    cwd: open.workspace.cwd,
  });
  assert.deepEqual(tool.arguments, { action: "search", query: "needle" });
  assert.equal(tool.leafId, "e0000004", "every tool call says where the model stands: sessionManager.getLeafId()");
  assert.deepEqual(shutdown, { seq: shutdown.seq, cmd: "event", instance: "pi", name: "session_shutdown", data: { reason: "quit" } });
});

test("a tool error from the server is thrown, so Pi marks the result as an error", async () => {
  const { tools, handlers } = load();
  const { ctx } = fakeContext(workdir);
  /** @type {Function} */ (handlers.get("session_start"))({ reason: "startup" }, ctx);
  await assert.rejects(tools[0].execute("c", { action: "explode" }, undefined, undefined, ctx), /^Error: unknown_action: /);
});

test("session_start twice (after a fork) starts one server and forwards both", async () => {
  const { tools, handlers } = load();
  const { ctx } = fakeContext(workdir);
  const sessionStart = /** @type {Function} */ (handlers.get("session_start"));
  sessionStart({ reason: "fork" }, ctx);
  sessionStart({ reason: "fork" }, ctx);
  await tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  sessionStart({ reason: "fork" }, ctx);
  /** @type {Function} */ (handlers.get("session_shutdown"))({ reason: "quit" }, ctx);
  await untilLogged((records) => records.some((record) => record.cmd === "stop"));
  const records = serverRequests();
  assert.equal(records.filter((record) => record.fake === "started").length, 1);
  assert.equal(records.filter((record) => record.cmd === "start").length, 1);
  assert.deepEqual(
    records.filter((record) => record.name === "session_start").map((record) => record.data.reason),
    ["fork", "fork"],
  );
});

test("the /memory command shows the server's answer to the user", async () => {
  const { commands } = load();
  const { ctx, notifications } = fakeContext(workdir);
  await commands[0].args[1].handler(" gc confirm ", ctx);
  assert.deepEqual(notifications, [{ message: "fake /memory gc confirm", level: "info" }]);
  const command = serverRequests().find((record) => record.cmd === "command");
  assert.deepEqual({ name: command?.name, args: command?.args }, { name: "memory", args: "gc confirm" });
});

test("only the user's memory.allowGlobal setting reaches the server, never a project's", async () => {
  mkdirSync(join(workdir, "proj", ".pi"));
  writeFileSync(join(workdir, "proj", ".pi", "settings.json"), JSON.stringify({ memory: { allowGlobal: true } }));
  const { ctx } = fakeContext(workdir);
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  writeFileSync(join(workdir, "agent", "settings.json"), JSON.stringify({ memory: { allowGlobal: true } }));
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const opens = serverRequests().filter((record) => record.cmd === "open");
  assert.deepEqual(opens.map((open) => open.settings), [
    { allow_global: false, redact_patterns: [], redact_allow: [] },
    { allow_global: true, redact_patterns: [], redact_allow: [] },
  ]);
});

test("the memory.command setting names the server when PIMEM_COMMAND is unset, and PIMEM_COMMAND wins", async () => {
  const settings = { memory: { command: [process.execPath, FAKE_SERVER, "--from-settings"] } };
  writeFileSync(join(workdir, "agent", "settings.json"), JSON.stringify(settings));
  const { ctx } = fakeContext(workdir);
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  delete process.env.PIMEM_COMMAND;
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const starts = serverRequests().filter((record) => record.fake === "started");
  assert.deepEqual(starts.map((start) => start.argv), [["serve"], ["--from-settings", "serve"]]);
});

test("a flat session dir is sent as a session dir", async () => {
  const flat = join(workdir, "flat");
  process.env.PI_CODING_AGENT_SESSION_DIR = flat;
  const { tools } = load();
  const { ctx } = fakeContext(workdir);
  ctx.sessionManager.getSessionDir = () => flat;
  ctx.sessionManager.getSessionFile = () => join(flat, "s.jsonl");
  await tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const open = serverRequests().find((record) => record.cmd === "open");
  assert.deepEqual(open?.workspace.session_dirs, [flat]);
});

test("a missing command gives the user one notification, the model one short line without paths", async () => {
  process.env.PIMEM_COMMAND = join(workdir, "no-such-pimem");
  const { tools, handlers } = load();
  const { ctx, notifications } = fakeContext(workdir);
  assert.equal(/** @type {Function} */ (handlers.get("session_start"))({ reason: "startup" }, ctx), undefined);
  for (let call = 0; call < 3; call += 1) {
    await assert.rejects(tools[0].execute("c", { action: "search" }, undefined, undefined, ctx), (error) => {
      assert.equal(/** @type {Error} */ (error).message, UNAVAILABLE);
      return true;
    });
  }
  assert.equal(UNAVAILABLE.includes("/"), false, "no machine path in what the model reads");
  assert.equal(/** @type {Function} */ (handlers.get("message_end"))({ message: { role: "user" } }, ctx), undefined);
  assert.equal(notifications.length, 1);
  assert.equal(notifications[0].level, "error");
  assert.match(notifications[0].message, /no-such-pimem/);
  assert.match(notifications[0].message, /PIMEM_COMMAND/);
});

test("a server that died is restarted for the next call", async () => {
  const { tools } = load();
  const { ctx } = fakeContext(workdir);
  await tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const firstPid = serverRequests().find((record) => record.fake === "started")?.pid;
  process.kill(firstPid, "SIGKILL");
  // A killed child stays visible to kill(pid, 0) until Node reaps it, which is when the exit is noticed.
  await untilLogged(() => !isAlive(firstPid));
  await new Promise((resolve) => setImmediate(resolve));
  await tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const starts = serverRequests().filter((record) => record.fake === "started");
  assert.equal(starts.length, 2);
  assert.notEqual(starts[1].pid, firstPid);
});

test("a tool call whose server dies under it is answered by a new server", async () => {
  process.env.FAKE_PIMEM_DIE_ONCE = join(workdir, "died");
  const { tools } = load();
  const { ctx } = fakeContext(workdir);
  const result = await tools[0].execute("c", { action: "search", query: "x" }, undefined, undefined, ctx);
  assert.equal(result.content[0].text, 'fake memory_context {"action":"search","query":"x"}');
  assert.equal(serverRequests().filter((record) => record.fake === "started").length, 2);
});

test("a server that keeps dying is started at most four times, with one notification", async () => {
  process.env.FAKE_PIMEM_EXIT_ON_TOOL = "1";
  const { tools } = load();
  const { ctx, notifications } = fakeContext(workdir);
  const failures = [];
  for (let call = 0; call < 4; call += 1) {
    failures.push(
      await tools[0].execute("c", { action: "search" }, undefined, undefined, ctx).then(
        () => "answered",
        (/** @type {Error} */ error) => error.message,
      ),
    );
  }
  // Each call tries twice (a call whose server died is repeated once): two calls use up four launches.
  assert.equal(serverRequests().filter((record) => record.fake === "started").length, 4);
  assert.deepEqual(failures, [UNAVAILABLE, UNAVAILABLE, UNAVAILABLE, UNAVAILABLE]);
  assert.equal(notifications.length, 1);
  assert.match(notifications[0].message, /stopped 4 times \(exited with code 3/);
});

test("a server that hangs in its handshake does not hold the tool call or outlive the session", async () => {
  process.env.FAKE_PIMEM_SILENT_START = "1";
  const { tools, handlers } = load();
  const { ctx } = fakeContext(workdir);
  const abort = new AbortController();
  const call = tools[0].execute("c", { action: "search" }, abort.signal, undefined, ctx);
  await untilLogged((records) => records.some((record) => record.cmd === "start"));
  abort.abort();
  await assert.rejects(call, /cancelled/);
  /** @type {Function} */ (handlers.get("session_shutdown"))({ reason: "quit" }, ctx);
  const pid = serverRequests().find((record) => record.fake === "started")?.pid;
  await untilLogged(() => !isAlive(pid));
});

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('"memory": {"enabled": false} in the user\'s settings or the project\'s turns the memory off', () => {
  const off = JSON.stringify({ memory: { enabled: false } });
  writeFileSync(join(workdir, "agent", "settings.json"), off);
  assert.deepEqual(load().calls, []);
  writeFileSync(join(workdir, "agent", "settings.json"), JSON.stringify({ memory: { enabled: true } }));
  assert.equal(load().tools.length, 1, "enabled: true is the default");
  const cwd = process.cwd();
  try {
    mkdirSync(join(workdir, "proj", ".pi"));
    process.chdir(join(workdir, "proj"));
    assert.equal(load().tools.length, 1, "a project without the key");
    writeFileSync(join(workdir, "proj", ".pi", "settings.json"), off);
    assert.deepEqual(load().calls, []);
    writeFileSync(join(workdir, "proj", ".pi", "settings.json"), JSON.stringify({ memory: { enabled: true } }));
    writeFileSync(join(workdir, "agent", "settings.json"), off);
    assert.deepEqual(load().calls, [], "a project cannot turn on what the user turned off");
  } finally {
    process.chdir(cwd);
  }
});

test("the extension imports nothing from Pi but types, so both package scopes load it", () => {
  const files = ["index.js", ...readdirSync(new URL("../lib/", import.meta.url)).map((name) => `lib/${name}`)];
  assert.ok(files.includes("lib/runtime.js"));
  for (const file of files) {
    const source = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
    const imports = [...source.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
    assert.ok(imports.length > 0, file);
    for (const name of imports) assert.match(name, /^(node:|\.\/|\.\.\/|@mariozechner\/)/, `${file} imports ${name}`);
  }
});

/**
 * A PATH with node and, unless `python` is false, a fake python3; never a pimem.
 * @param {boolean} python
 */
function freshMachinePath(python) {
  const bin = join(workdir, python ? "bin" : "bin-no-python");
  mkdirSync(bin, { recursive: true });
  symlinkSync(process.execPath, join(bin, "node"));
  for (const tool of ["mv", "rm"]) {  // the installer's shell uses them, as on any machine
    const found = ["/bin", "/usr/bin"].map((folder) => join(folder, tool)).find((path) => existsSync(path));
    symlinkSync(/** @type {string} */ (found), join(bin, tool));
  }
  if (python) symlinkSync(FAKE_PYTHON, join(bin, "python3"));
  delete process.env.PIMEM_COMMAND;
  process.env.PATH = bin;
  process.env.FAKE_PIMEM_SERVER = FAKE_SERVER;
  process.env.FAKE_PYTHON_LOG = join(workdir, "python.log");
}

/** @returns {Array<Record<string, any>>} */
function pythonCalls() {
  try {
    return readFileSync(join(workdir, "python.log"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

/**
 * Waits (bounded) for `count` notifications.
 * @param {Array<{message: string}>} notifications
 * @param {number} count
 */
async function untilNotified(notifications, count) {
  for (let attempt = 0; attempt < 400 && notifications.length < count; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.equal(notifications.length, count, JSON.stringify(notifications));
}

test("without pimem, the runtime is installed in the background once, with two notifications", async () => {
  freshMachinePath(true);
  process.env.FAKE_PIP_DELAY_MS = "400";
  const { tools, handlers } = load();
  const { ctx, notifications } = fakeContext(workdir);
  assert.equal(/** @type {Function} */ (handlers.get("session_start"))({ reason: "startup" }, ctx), undefined);
  await assert.rejects(tools[0].execute("c", { action: "search" }, undefined, undefined, ctx), (error) => {
    assert.equal(/** @type {Error} */ (error).message, SETTING_UP);
    return true;
  });
  await untilNotified(notifications, 2);
  assert.match(notifications[0].message, /installing its Python side in the background/);
  assert.match(notifications[1].message, /installed; memory_context works now/);
  const result = await tools[0].execute("c", { action: "search", query: "x" }, undefined, undefined, ctx);
  assert.equal(result.content[0].text, 'fake memory_context {"action":"search","query":"x"}');
  const runtime = join(workdir, "agent", "memory-runtime");
  assert.ok(existsSync(join(runtime, "installed.json")));
  assert.equal(existsSync(join(workdir, "agent", "memory", "venv")), false, "not under the disposable index");
  const pip = pythonCalls().filter((call) => call.args[1] === "pip");
  assert.equal(pip.length, 1);
  assert.match(pip[0].constraint, /python-constraints\.txt$/);
  assert.equal(existsSync(pip[0].args.at(-1) + "/pyproject.toml"), true, "pip installs the shipped package");

  // The next start (a new runtime) installs nothing and says nothing.
  const next = load();
  const again = fakeContext(workdir);
  /** @type {Function} */ (next.handlers.get("session_start"))({ reason: "startup" }, again.ctx);
  await next.tools[0].execute("c", { action: "search" }, undefined, undefined, again.ctx);
  assert.deepEqual(again.notifications, []);
  assert.equal(pythonCalls().filter((call) => call.args[1] === "pip").length, 1);
});

test("memory.command and PIMEM_COMMAND still win over the installed runtime", async () => {
  freshMachinePath(true);
  const first = load();
  const { ctx, notifications } = fakeContext(workdir);
  /** @type {Function} */ (first.handlers.get("session_start"))({ reason: "startup" }, ctx);
  await untilNotified(notifications, 2);
  // Once installed, the runtime's server starts by itself (the index is built in the background).
  await untilLogged((records) => records.some((record) => record.fake === "started"));
  writeFileSync(join(workdir, "agent", "settings.json"), JSON.stringify({ memory: { command: [process.execPath, FAKE_SERVER, "--from-settings"] } }));
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  process.env.PIMEM_COMMAND = FAKE_SERVER;
  await load().tools[0].execute("c", { action: "search" }, undefined, undefined, ctx);
  const starts = serverRequests().filter((record) => record.fake === "started").map((start) => start.argv);
  assert.deepEqual(starts, [["serve"], ["--from-settings", "serve"], ["serve"]]);
});

test("without a Python >= 3.11, one notification says what to install, and the tool says one line", async () => {
  freshMachinePath(false);
  const { tools, handlers } = load();
  const { ctx, notifications } = fakeContext(workdir);
  /** @type {Function} */ (handlers.get("session_start"))({ reason: "startup" }, ctx);
  await untilNotified(notifications, 1);
  for (let call = 0; call < 3; call += 1) {
    await assert.rejects(tools[0].execute("c", { action: "search" }, undefined, undefined, ctx), (error) => {
      assert.equal(/** @type {Error} */ (error).message, UNAVAILABLE);
      return true;
    });
  }
  assert.deepEqual(notifications, [{ message: NO_PYTHON, level: "error" }]);
  assert.match(NO_PYTHON, /python3-venv/);
});

test("a failed pip install is told once, with where its log is", async () => {
  freshMachinePath(true);
  process.env.FAKE_PIP_FAIL = "1";
  const { tools, handlers } = load();
  const { ctx, notifications } = fakeContext(workdir);
  /** @type {Function} */ (handlers.get("session_start"))({ reason: "startup" }, ctx);
  await untilNotified(notifications, 2);
  await assert.rejects(tools[0].execute("c", { action: "search" }, undefined, undefined, ctx), /unavailable/);
  assert.match(notifications[1].message, /installing its Python side failed .*No matching distribution.*install\.log/);
  assert.equal(notifications.length, 2);
});

test("a Pi that quits mid-install (a pi -p run) leaves the install to finish by itself", async () => {
  freshMachinePath(true);
  process.env.FAKE_PIP_DELAY_MS = "1500";
  const quitter = `
    const { default: memoryExtension } = await import(${JSON.stringify(new URL("../index.js", import.meta.url).href)});
    const handlers = new Map();
    memoryExtension(new Proxy({}, { get: (_, method) => (...args) => { if (method === "on") handlers.set(args[0], args[1]); } }));
    const dir = ${JSON.stringify(join(workdir, "agent", "sessions", "--proj--"))};
    handlers.get("session_start")({ reason: "startup" }, {
      cwd: ${JSON.stringify(join(workdir, "proj"))}, hasUI: false, ui: { notify() {} },
      sessionManager: { getSessionFile: () => dir + "/s.jsonl", getSessionDir: () => dir, getCwd: () => "/" },
    });
    setTimeout(() => process.exit(0), 700);`;
  const quit = spawnSync(process.execPath, ["--input-type=module", "-e", quitter], { env: process.env, timeout: 30000 });
  assert.equal(quit.status, 0, String(quit.stderr));
  const stamp = join(workdir, "agent", "memory-runtime", "installed.json");
  assert.equal(existsSync(stamp), false, "Pi quit before pip was done");
  const lock = join(workdir, "agent", "memory-runtime", "install.lock");
  // the install writes its stamp, then gives the lock back: wait for both (bounded), never for a time
  for (let attempt = 0; attempt < 400 && (!existsSync(stamp) || existsSync(lock)); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.ok(existsSync(stamp), "the detached install wrote its stamp");
  assert.equal(existsSync(lock), false, "and gave the lock back");
  const { tools } = load();
  const result = await tools[0].execute("c", { action: "search", query: "y" }, undefined, undefined, fakeContext(workdir).ctx);
  assert.equal(result.content[0].text, 'fake memory_context {"action":"search","query":"y"}');
});
