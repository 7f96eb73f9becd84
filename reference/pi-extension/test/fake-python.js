#!/usr/bin/env node
// @ts-check
// A stand-in for a Python >= 3.11 and the venv it makes, for the provisioning tests: `-c` checks
// pass, `-m venv DIR` makes DIR/bin/python (this script again), and `-m pip install ...` makes
// the venv's `pimem` (a link to $FAKE_PIMEM_SERVER) after $FAKE_PIP_DELAY_MS. Every call is appended
// to $FAKE_PYTHON_LOG; $FAKE_PIP_FAIL=1 makes pip fail.

import { appendFileSync, copyFileSync, chmodSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
if (process.env.FAKE_PYTHON_LOG) {
  appendFileSync(process.env.FAKE_PYTHON_LOG, `${JSON.stringify({ python: process.argv[1], args, constraint: process.env.PIP_CONSTRAINT })}\n`);
}
const self = fileURLToPath(import.meta.url);
if (args[0] === "-m" && args[1] === "venv") {
  mkdirSync(join(args[2], "bin"), { recursive: true });
  copyFileSync(self, join(args[2], "bin", "python"));
  chmodSync(join(args[2], "bin", "python"), 0o755);
} else if (args[0] === "-m" && args[1] === "pip") {
  await new Promise((done) => setTimeout(done, Number(process.env.FAKE_PIP_DELAY_MS ?? 0)));
  if (process.env.FAKE_PIP_FAIL) {
    process.stderr.write("ERROR: No matching distribution found for apsw\n");
    process.exit(1);
  }
  symlinkSync(String(process.env.FAKE_PIMEM_SERVER), join(dirname(process.argv[1]), "pimem"));
}
