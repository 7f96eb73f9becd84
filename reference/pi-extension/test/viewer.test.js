// @ts-check
// `/memory view` against the real `pimem view` ($PIMEM_VIEW_TEST_COMMAND, set by
// reference/tests/test_extension_viewer.py): the URL is printed where there is no browser, a second
// run replaces the first, session_shutdown stops it, and the viewer never holds Pi open.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import memoryExtension from "../index.js";
import { canOpenBrowser } from "../lib/viewer.js";
import { fakeContext } from "./fake-context.js";

const COMMAND = process.env.PIMEM_VIEW_TEST_COMMAND;
const skip = COMMAND ? false : "PIMEM_VIEW_TEST_COMMAND is not set (run it from pytest)";
const INDEX = fileURLToPath(new URL("../index.js", import.meta.url));
const savedEnv = { ...process.env };

/** @type {string} */
let workdir;
/** @type {Function[]} */
let shutdowns = [];

beforeEach(() => {
  workdir = mkdtempSync(join(tmpdir(), "pimem-ext-view-"));
  const sessions = join(workdir, "agent", "sessions", "--proj--");
  mkdirSync(sessions, { recursive: true });
  mkdirSync(join(workdir, "proj"));
  const header = { type: "session", version: 3, id: "s-view", timestamp: "2026-11-20T10:00:00.000Z", cwd: join(workdir, "proj") };
  const user = {
    type: "message",
    id: "e1",
    parentId: null,
    timestamp: "2026-11-20T10:01:00.000Z",
    message: { role: "user", content: [{ type: "text", text: "hello viewer" }] },
  };
  writeFileSync(join(sessions, "s1.jsonl"), `${JSON.stringify(header)}\n${JSON.stringify(user)}\n`);
  process.env.PI_CODING_AGENT_DIR = join(workdir, "agent");
  process.env.PIMEM_COMMAND = COMMAND ?? "pimem";
  delete process.env.DISPLAY;
  delete process.env.WAYLAND_DISPLAY;
});

afterEach(() => {
  for (const shutdown of shutdowns) shutdown({ type: "session_shutdown", reason: "quit" }, fakeContext(workdir).ctx);
  shutdowns = [];
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
});

function load() {
  /** @type {Map<string, Function>} */
  const commands = new Map();
  /** @type {Map<string, Function>} */
  const events = new Map();
  memoryExtension(
    /** @type {any} */ ({
      registerTool() {},
      registerCommand: (/** @type {string} */ name, /** @type {any} */ options) => commands.set(name, options.handler),
      on: (/** @type {string} */ name, /** @type {Function} */ handler) => events.set(name, handler),
    }),
  );
  shutdowns.push(/** @type {Function} */ (events.get("session_shutdown")));
  return { memory: /** @type {Function} */ (commands.get("memory")), events };
}

/** @param {string} message */
function urlIn(message) {
  const found = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(message);
  assert.ok(found, `no viewer URL in ${JSON.stringify(message)}`);
  return found[0];
}

/** @param {string} url */
async function answers(url) {
  try {
    const response = await fetch(url, { redirect: "manual" });
    return response.status;
  } catch {
    return 0; // connection refused: nothing listens any more
  }
}

/** @param {string} url */
async function gone(url, seconds = 20) {
  for (let waited = 0; waited < seconds * 10; waited += 1) {
    if ((await answers(url)) === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

test("a browser is opened only on a desktop, never over SSH or without a display", () => {
  assert.equal(canOpenBrowser({}, "linux"), false);
  assert.equal(canOpenBrowser({ DISPLAY: ":0" }, "linux"), true);
  assert.equal(canOpenBrowser({ WAYLAND_DISPLAY: "wayland-0" }, "linux"), true);
  assert.equal(canOpenBrowser({}, "darwin"), true);
  assert.equal(canOpenBrowser({ SSH_CONNECTION: "1.2.3.4 5 6.7.8.9 22" }, "darwin"), false);
});

test("/memory view on a headless host prints the URL, which trades its token for a cookie", { skip }, async () => {
  const { memory } = load();
  const { ctx, notifications } = fakeContext(workdir);
  await memory("view", ctx);
  assert.equal(notifications.length, 1, JSON.stringify(notifications));
  assert.equal(notifications[0].level, "info");
  const url = urlIn(notifications[0].message);
  const response = await fetch(url, { redirect: "manual" });
  assert.equal(response.status, 303);
  assert.match(response.headers.get("set-cookie") ?? "", /HttpOnly; SameSite=Strict/);
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0];
  const page = await fetch(new URL("/api/search?q=hello", url), { headers: { cookie } });
  assert.equal(page.status, 200);
  const body = await page.json();
  assert.deepEqual(body.results.map((/** @type {any} */ item) => item.entryId), ["e1"]);
});

test("/memory view again replaces the running viewer; session_shutdown stops it", { skip }, async () => {
  const { memory, events } = load();
  const { ctx, notifications } = fakeContext(workdir);
  await memory("view", ctx);
  await memory("view", ctx);
  const [first, second] = notifications.map((item) => urlIn(item.message));
  assert.notEqual(first, second);
  assert.ok(await gone(first), "the first viewer still answers after /memory view ran again");
  assert.equal(await answers(second), 303);
  /** @type {Function} */ (events.get("session_shutdown"))({ type: "session_shutdown", reason: "quit" }, ctx);
  assert.ok(await gone(second), "the viewer still answers after session_shutdown");
});

test("the viewer never holds Pi open, and stops once Pi is gone", { skip }, async () => {
  // A stand-in for Pi: loads the extension, runs /memory view, prints the URL and does nothing more.
  const script = `
    const { default: extension } = await import(${JSON.stringify(INDEX)});
    let handler;
    extension({ registerTool() {}, registerCommand: (name, options) => { handler = options.handler; }, on() {} });
    const sessionDir = ${JSON.stringify(join(workdir, "agent", "sessions", "--proj--"))};
    await handler("view", {
      cwd: ${JSON.stringify(join(workdir, "proj"))}, hasUI: false,
      ui: { notify() {} },
      sessionManager: { getSessionFile: () => sessionDir + "/s1.jsonl", getSessionDir: () => sessionDir, getCwd: () => "" },
    });
  `;
  const pi = spawn(process.execPath, ["--input-type=module", "-e", script], { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  pi.stderr.setEncoding("utf8").on("data", (chunk) => {
    stderr += chunk;
  });
  const exit = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve("still running after 60 s"), 60000);
    pi.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  assert.equal(exit, 0, stderr);
  const url = urlIn(stderr); // without a UI, notifications go to stderr
  assert.ok(await gone(url), "the viewer outlived the Pi process that started it");
});
