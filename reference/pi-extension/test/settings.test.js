// @ts-check
// The settings the extension hands to `pimem serve`: redaction patterns from the user's and the
// project's settings, the allowlist from the user's only. Run with `node --test`.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readUserSettings } from "../lib/workspace.js";

/** @param {string} path @param {unknown} value */
function writeJson(path, value) {
  writeFileSync(path, JSON.stringify(value));
}

test("a project adds redaction patterns but never an allowlist", async () => {
  const root = mkdtempSync(join(tmpdir(), "pimem-settings-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir);
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  const mine = { name: "mine", pattern: "mine_[0-9]{12}" };
  const theirs = { name: "theirs", pattern: "theirs_[0-9]{12}" };
  writeJson(join(agentDir, "settings.json"), { memory: { redact: { patterns: [mine], allow: ["keep-me-1"] } } });
  writeJson(join(cwd, ".pi", "settings.json"), { memory: { allowGlobal: true, redact: { patterns: [theirs], allow: ["AKIAZ7QWERTY2XCVBN5M"] } } });
  const { memory } = await readUserSettings(agentDir, cwd);
  assert.deepEqual(memory.redactPatterns, [mine, theirs]);
  assert.deepEqual(memory.redactAllow, ["keep-me-1"]);
  assert.equal(memory.allowGlobal, false);
});

test("without settings files nothing is added", async () => {
  const root = mkdtempSync(join(tmpdir(), "pimem-settings-"));
  const { memory } = await readUserSettings(join(root, "none"), join(root, "nowhere"));
  assert.deepEqual(memory.redactPatterns, []);
  assert.deepEqual(memory.redactAllow, []);
});
