#!/usr/bin/env node
// A complete adapter for the pi-memory conformance suite (protocol 1) that implements almost
// nothing: it claims the core profile, remembers nothing and answers every search with no
// results. It is the starting point for an implementation in JavaScript or TypeScript: replace
// the bodies of `tool` and `command` with calls into your memory.
//
//   pimem-conformance run --impl "node conformance/examples/minimal-adapter.mjs" --report report.jsonl
//
// Protocol: one JSON request per stdin line, exactly one JSON response per stdout line, in order,
// each echoing the request's `seq`. Diagnostics go to stderr. No npm packages needed.
import { createInterface } from "node:readline";

const PROTOCOL = 1;
const ACTIONS = new Set(["search", "read", "summaries"]);
const instances = new Map(); // instance name -> {workspace, clock, settings}

function toolResult(details) {
  return { content: [{ type: "text", text: JSON.stringify(details) }], details };
}

function toolError(code, message) {
  return { error: { code, message } };
}

// What the memory_context tool returns: a real implementation searches its index here.
function tool(instance, name, args) {
  if (name !== "memory_context") return toolError("bad_argument", `unknown tool ${name}`);
  if (!ACTIONS.has(args.action)) {
    return toolError("unknown_action", `unknown action ${JSON.stringify(args.action)}; try {"action": "search"}`);
  }
  const scope = args.scope ?? "project";
  if (scope === "global" && !instance.settings.allow_global) {
    return toolError("scope_denied", "global scope needs the allow_global setting");
  }
  const indexing = { complete: true, indexedJournals: 0, totalJournals: 0 };
  switch (args.action) {
    case "search":
      return toolResult({
        action: "search", scope, query: args.query ?? null, match: args.query ? "none" : "list",
        hint: null, limit: args.limit ?? 10, truncated: false, results: [], indexing,
      });
    case "read":
      return toolResult({ action: "read", status: "not_found", entryId: args.entryId ?? null });
    default:
      return toolResult({ action: "summaries", scope, results: [], indexing });
  }
}

// What the user's /memory command prints.
function command(instance, name, args) {
  if (args.trim() === "status") {
    const details = {
      journals: 0, entries: 0, summaries: 0, skipped: { files: 0, lines: 0 },
      indexing: { complete: true, indexedJournals: 0, totalJournals: 0 }, lease: null,
    };
    return { text: "memory: nothing indexed", details };
  }
  return toolError("bad_argument", `unknown /${name} arguments ${JSON.stringify(args)}; try "status"`);
}

function handle(request) {
  const { cmd } = request;
  if (cmd === "start") {
    if (request.protocol !== PROTOCOL) throw new Error(`this adapter speaks protocol ${PROTOCOL} only`);
    return {
      protocol: PROTOCOL,
      implementation: { name: "minimal-adapter", version: "0.0.1", language: "javascript" },
      profiles: ["core"],
    };
  }
  if (cmd === "manifest") {
    return {
      tools: [{
        name: "memory_context", label: "Memory",
        description: "Search and read earlier Pi sessions.",
        parameters: { type: "object", properties: { action: { type: "string" } }, required: ["action"] },
      }],
      commands: [{ name: "memory", description: "Memory status" }],
      events: ["session_start"],
      calls: [],
    };
  }
  if (cmd === "stop") return {};
  if (cmd === "open") {
    instances.set(request.instance, {
      workspace: request.workspace, clock: request.clock, settings: request.settings ?? {},
    });
    return { instance: request.instance };
  }
  const instance = instances.get(request.instance);
  if (instance === undefined) throw new Error(`unknown instance ${JSON.stringify(request.instance)}`);
  switch (cmd) {
    case "event":
    case "idle":
      return {};
    case "clock":
      instance.clock.now = request.now;
      return {};
    case "tool":
      return tool(instance, request.name, request.arguments);
    case "command":
      return command(instance, request.name, request.args);
    case "close":
      instances.delete(request.instance);
      return {};
    default:
      throw new Error(`unknown cmd ${JSON.stringify(cmd)}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  let response;
  try {
    response = { seq: request.seq, ...handle(request) };
  } catch (error) {
    // An adapter-level failure (an unknown cmd or instance, a start for another protocol version):
    // answered `errored`, and the adapter goes on serving.
    response = { seq: request.seq, errored: true, context: { message: String(error.message), traceback: String(error.stack) } };
  }
  process.stdout.write(JSON.stringify(response) + "\n");
  if (request.cmd === "stop") break;
}
