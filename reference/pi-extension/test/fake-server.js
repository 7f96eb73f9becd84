#!/usr/bin/env node
// @ts-check
// A stand-in for `pimem serve` that speaks the adapter protocol (spec/protocol.md) and appends
// every request it receives, plus its own start and exit, to $FAKE_PIMEM_LOG as JSON lines.
// $FAKE_PIMEM_EXIT_ON_TOOL=1 makes it die on every tool call (a server that keeps crashing), and
// $FAKE_PIMEM_DIE_ONCE=<file> on the first tool call of the first server (creating the file);
// $FAKE_PIMEM_SILENT_START=1 makes it never answer `start` (a server that hangs).
// Usage: fake-server.js serve

import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";

const manifest = JSON.parse(readFileSync(new URL("../manifest.json", import.meta.url), "utf8"));

/** @param {Record<string, unknown>} record */
function log(record) {
  if (process.env.FAKE_PIMEM_LOG) appendFileSync(process.env.FAKE_PIMEM_LOG, `${JSON.stringify(record)}\n`);
}

/**
 * @param {Record<string, any>} request
 * @returns {Record<string, unknown>}
 */
function answer(request) {
  switch (request.cmd) {
    case "start":
      return { protocol: 1, implementation: { name: "fake", version: "0", language: "javascript" }, profiles: ["core"] };
    case "open":
      return { instance: request.instance };
    case "tool":
      if (process.env.FAKE_PIMEM_EXIT_ON_TOOL === "1") process.exit(3);
      if (process.env.FAKE_PIMEM_DIE_ONCE && !existsSync(process.env.FAKE_PIMEM_DIE_ONCE)) {
        writeFileSync(process.env.FAKE_PIMEM_DIE_ONCE, "");
        process.exit(3);
      }
      if (request.arguments.action === "explode") {
        return { error: { code: "unknown_action", message: "unknown action explode; try action: search" } };
      }
      return {
        content: [{ type: "text", text: `fake ${request.name} ${JSON.stringify(request.arguments)}` }],
        details: { arguments: request.arguments },
      };
    case "command":
      return { text: `fake /${request.name} ${request.args}`, details: {} };
    case "manifest":
      return manifest;
    case "event":
    case "clock":
    case "idle":
    case "close":
    case "stop":
      return {};
    default:
      return { errored: true, context: { message: `unknown cmd ${request.cmd}` } };
  }
}

log({ fake: "started", pid: process.pid, argv: process.argv.slice(2), priority: getPriority() });
let buffer = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (/** @type {string} */ chunk) => {
  buffer += chunk;
  for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
    const request = JSON.parse(buffer.slice(0, newline));
    buffer = buffer.slice(newline + 1);
    log(request);
    if (request.cmd === "start" && process.env.FAKE_PIMEM_SILENT_START === "1") continue;
    process.stdout.write(`${JSON.stringify({ seq: request.seq, ...answer(request) })}\n`);
    if (request.cmd === "stop") process.exit(0);
  }
});
process.stdin.on("end", () => {
  log({ fake: "stdin closed" });
  process.exit(0);
});
