// @ts-check
// A fake ExtensionContext for the extension's tests: a session of project `proj` under `workdir`
// (agent/sessions/--proj--/s1.jsonl, which may not exist yet), recording every notification.

import { join } from "node:path";

/**
 * @param {string} workdir
 * @param {boolean} [hasUI]
 */
export function fakeContext(workdir, hasUI = true) {
  /** @type {Array<{message: string, level: string}>} */
  const notifications = [];
  const sessionDir = join(workdir, "agent", "sessions", "--proj--");
  const ctx = {
    cwd: join(workdir, "proj"),
    hasUI,
    ui: {
      notify: (/** @type {string} */ message, /** @type {string} */ level) => notifications.push({ message, level }),
    },
    sessionManager: {
      getSessionFile: () => join(sessionDir, "s1.jsonl"),
      getSessionDir: () => sessionDir,
      getCwd: () => join(workdir, "proj"),
      getLeafId: () => "e0000004",
    },
  };
  return { ctx, notifications };
}
