#!/usr/bin/env node
// A complete adapter for the pi-memory conformance suite (protocol 1) that implements almost
// nothing: it claims the core profile, keeps no index and answers a search by scanning the
// project's journals for user and assistant text holding every query word. It passes every
// case of the protocol area, so an implementation that starts from it inherits no protocol
// fault. It is the starting point for an implementation in JavaScript or TypeScript: replace
// the bodies of `tool` and `command` with calls into your memory.
//
//   pimem-conformance run --impl "node conformance/examples/minimal-adapter.mjs" --report report.jsonl
//
// Protocol: one JSON request per stdin line, exactly one JSON response per stdout line, in order,
// each echoing the request's `seq`. Diagnostics go to stderr. No npm packages needed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
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

// What the tool publishes: the spec's tool-parameters.schema.json, which the suite compares.
const KINDS = ["user", "assistant", "tool_result", "bash", "custom", "custom_message", "compaction",
  "branch_summary", "session_info", "label"];
const text = { type: "string" };
const nonEmpty = { type: "string", minLength: 1 };
const PARAMETERS = {
  type: "object", additionalProperties: false, required: ["action"],
  properties: {
    action: { type: "string", enum: ["search", "read", "summaries", "around"] },
    query: text, entryId: nonEmpty, source: nonEmpty, sessionId: nonEmpty, since: nonEmpty, until: nonEmpty,
    offset: { type: "integer", minimum: 0 },
    scope: { type: "string", enum: ["project", "session", "global"] },
    kind: { anyOf: [{ type: "string", enum: KINDS }, { type: "array", items: { type: "string", enum: KINDS }, minItems: 1 }] },
    limit: { type: "integer", minimum: 1, maximum: 50 },
    before: { type: "integer", minimum: 0, maximum: 20 },
    after: { type: "integer", minimum: 0, maximum: 20 },
  },
};

// Every journal the workspace names: <agent_dir>/sessions/*/*.jsonl and <session_dir>/*.jsonl.
function journalPaths(workspace) {
  const list = (dir) => { try { return readdirSync(dir); } catch { return []; } };
  const sessions = join(workspace.agent_dir, "sessions");
  const folders = [...list(sessions).map((name) => join(sessions, name)), ...workspace.session_dirs];
  const isFile = (path) => { try { return statSync(path).isFile(); } catch { return false; } }; // never a FIFO
  return folders.flatMap((dir) => list(dir).filter((name) => name.endsWith(".jsonl")).map((name) => join(dir, name)))
    .filter(isFile);
}

// A naive scan (a real implementation reads its index): user and assistant text of the journals
// whose header cwd is the project's cwd or below it, newest first.
function scan(workspace, words) {
  const hits = [];
  for (const path of journalPaths(workspace)) {
    const lines = readFileSync(path, "utf8").split("\n").slice(0, -1).map((line) => {
      try { return JSON.parse(line); } catch { return null; }
    });
    const header = lines[0];
    if (header?.type !== "session" || !(header.cwd === workspace.cwd || header.cwd?.startsWith(workspace.cwd + "/"))) continue;
    for (const line of lines.slice(1)) {
      const role = line?.type === "message" ? line.message?.role : undefined;
      if ((role !== "user" && role !== "assistant") || typeof line.id !== "string") continue;
      const content = line.message.content;
      const body = typeof content === "string" ? content
        : (Array.isArray(content) ? content : []).filter((b) => b?.type === "text").map((b) => b.text).join("\n");
      if (!body || !words.every((word) => body.toLowerCase().includes(word))) continue;
      hits.push({
        entryId: line.id, source: path, sessionId: header.id, timestamp: String(line.timestamp ?? ""),
        kind: role, role, toolName: null, cwd: header.cwd, excerpt: body.slice(0, 200), match: "all",
      });
    }
  }
  return hits.sort((a, b) => (a.timestamp < b.timestamp ? 1 : -1));
}

// What the memory_context tool returns: a real implementation searches its index here.
function tool(instance, name, args) {
  // A tool the integration never registered is the adapter's fault (errored), not the model's.
  if (name !== "memory_context") throw new Error(`unknown tool ${JSON.stringify(name)}`);
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return toolError("bad_argument", 'arguments must be an object, for example {"action": "search", "query": "retry"}');
  }
  for (const [key, value] of Object.entries(args)) {
    const declared = PARAMETERS.properties[key];
    if (declared === undefined) return toolError("bad_argument", `unknown parameter ${JSON.stringify(key)}`);
    if (declared.type === "string" && typeof value !== "string") {
      return toolError("bad_argument", `${key} must be a string, for example {"action": "search", "query": "retry"}`);
    }
  }
  if (!ACTIONS.has(args.action)) {
    return toolError("unknown_action", `unknown action ${JSON.stringify(args.action)}; try {"action": "search"}`);
  }
  const scope = args.scope ?? "project";
  if (scope === "global" && !instance.settings.allow_global) {
    return toolError("scope_denied", "global scope needs the allow_global setting");
  }
  // checkedAt: this adapter reads the journals themselves on every call, so it is always now
  const indexing = { complete: true, indexedJournals: 0, totalJournals: 0, checkedAt: checkedAt(instance) };
  switch (args.action) {
    case "search": {
      const limit = args.limit ?? 10;
      const words = (args.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
      const found = scan(instance.workspace, words);
      const match = words.length === 0 ? "list" : found.length > 0 ? "all" : "none";
      return toolResult({
        action: "search", scope, query: args.query ?? null, match, hint: null, limit,
        truncated: found.length > limit, results: found.slice(0, limit), indexing,
        inContext: 0, // this example ignores leafId: it leaves nothing out (JM-SEARCH-401)
      });
    }
    case "read":
      return toolResult({ action: "read", status: "not_found", entryId: args.entryId ?? null });
    default:
      return toolResult({ action: "summaries", scope, results: [], indexing });
  }
}

// The instance's clock in UTC with milliseconds, as indexing.checkedAt is written.
function checkedAt(instance) {
  return new Date(instance.clock.now).toISOString();
}

// What the user's /memory command prints.
function command(instance, name, args) {
  if (name !== "memory") throw new Error(`unknown command ${JSON.stringify(name)}`);
  if (args.trim() === "status") {
    const details = {
      journals: 0, entries: 0, summaries: 0, skipped: { files: 0, lines: 0 },
      indexing: { complete: true, indexedJournals: 0, totalJournals: 0, checkedAt: checkedAt(instance) },
      lease: null,
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
        parameters: PARAMETERS,
      }],
      commands: [{ name: "memory", description: "Memory status" }],
      events: ["session_start"],
      calls: [],
    };
  }
  if (cmd === "stop") return {};
  if (cmd === "open") {
    if (typeof request.instance !== "string") throw new Error("open needs an instance name");
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
      if (typeof request.now !== "string") throw new Error("clock.now must be an ISO-8601 string");
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
