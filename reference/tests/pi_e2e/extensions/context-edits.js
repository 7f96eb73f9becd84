// @ts-check
// A test-only Pi 1.x extension that edits the model's context the way extensions do: an answer
// holding "EDITME[words]" is replaced by "REPLACED-BY-CONTEXT-EDIT words", one holding "OMITME"
// is omitted (turn_end boundary entries, Pi 1.x). `/branchsum <entryId>` goes back to that entry
// with a branch summary (ctx.navigateTree), since RPC mode has no /tree.

/** @param {any} pi */
export default function contextEdits(pi) {
  pi.on("turn_end", (/** @type {any} */ event) => {
    const content = Array.isArray(event.message?.content) ? event.message.content : [];
    const text = content.map((/** @type {any} */ block) => (block.type === "text" ? block.text : "")).join("");
    const edited = /EDITME\[([^\]]*)\]/.exec(text);
    if (edited) {
      const replacement = { content: [{ type: "text", text: `REPLACED-BY-CONTEXT-EDIT ${edited[1]}` }] };
      return { entries: [...event.entries, { type: "context_edit", targetId: event.messageEntryId, replacement }] };
    }
    if (text.includes("OMITME")) {
      return { entries: [...event.entries, { type: "context_edit", targetId: event.messageEntryId, replacement: null }] };
    }
    return undefined;
  });
  pi.registerCommand("branchsum", {
    description: "Go back to an entry, summarising the branch left",
    handler: async (/** @type {string} */ args, /** @type {any} */ ctx) => {
      await ctx.navigateTree(args.trim(), { summarize: true });
    },
  });
}
