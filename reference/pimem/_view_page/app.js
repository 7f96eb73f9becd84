// The memory viewer's page: plain DOM, no framework. Journal text only ever goes in through
// textContent or text nodes, never as HTML, so a <script> in a journal shows as text.
"use strict";

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const SUMMARY_KINDS = { compaction: "compaction summary", branch_summary: "branch summary" };
const SCOPE_LABELS = { project: "this project", session: "this session", global: "all projects" };
const AROUND = 5;

const state = {
  meta: null,
  view: "search",
  entry: null, // {entryId, source, scope, project}
  pages: [], // offsets of the pages read so far, for "Previous page"
  offset: 0,
};

/** An element with text children (strings become text nodes) and a few properties. */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "class") node.className = value;
    else if (name === "onclick") node.addEventListener("click", value);
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

async function api(route, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(name, String(value));
  }
  const response = await fetch(`/api/${route}?${query}`, { credentials: "same-origin", cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
  return body;
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

function show(view) {
  state.view = view;
  for (const name of ["search", "entry", "around", "sessions", "status"]) $(`view-${name}`).hidden = name !== view;
  const tab = { entry: "search", around: "search" }[view] || view;
  for (const button of $("tabs").querySelectorAll("button")) {
    if (button.dataset.view === tab) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
}

/** Where the page looks: a project handle, or all projects (the tool's global scope). */
function where() {
  const project = /** @type {HTMLSelectElement} */ ($("project")).value;
  const scope = /** @type {HTMLSelectElement} */ ($("scope")).value;
  if (project === "all" || scope === "global") return { project: "all", scope: "global" };
  return { project, scope };
}

function indexing(state) {
  $("indexing").textContent =
    state && !state.complete ? `indexing: ${state.indexedJournals} of ${state.totalJournals} journals` : "";
}

/** `text` with every occurrence of the query's terms in <mark> (terms come from the server). */
function highlighted(text, terms) {
  const fragment = document.createDocumentFragment();
  const escaped = terms.filter((term) => term).map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!escaped.length) {
    fragment.append(text);
    return fragment;
  }
  let last = 0;
  for (const match of text.matchAll(new RegExp(escaped.join("|"), "giu"))) {
    fragment.append(text.slice(last, match.index), el("mark", {}, match[0]));
    last = match.index + match[0].length;
  }
  fragment.append(text.slice(last));
  return fragment;
}

function kindTag(kind) {
  const summary = SUMMARY_KINDS[kind];
  return el("span", { class: summary ? "tag summary" : "tag" }, summary || kind);
}

function headLine(item) {
  return `${item.timestamp} · session ${item.sessionId.slice(0, 8)} · ${item.entryId}`;
}

// -- search ---------------------------------------------------------------------------------------

async function search() {
  const form = { q: $("q").value, kind: $("kind").value, since: $("since").value, until: $("until").value };
  const body = await api("search", { ...where(), ...form });
  const list = $("results");
  list.replaceChildren();
  for (const item of body.results) {
    const ref = { entryId: item.entryId, source: item.source, ...where() };
    list.append(
      el(
        "li",
        { class: SUMMARY_KINDS[item.kind] ? "result summary" : "result" },
        el("button", { class: "head", type: "button", onclick: () => openEntry(ref, 0, []) }, kindTag(item.kind), headLine(item)),
        el("p", { class: "excerpt" }, highlighted(item.excerpt, body.highlight)),
      ),
    );
  }
  const what = body.match === "list" ? "newest entries" : `match: ${body.match}`;
  const more = body.truncated ? "; more exist beyond the limit, narrow the query" : "";
  $("search-info").textContent = `${body.results.length} result(s), ${what}${more}${body.hint ? ` · ${body.hint}` : ""}`;
  indexing(body.indexing);
}

// -- entry, paged ------------------------------------------------------------------------------

async function openEntry(ref, offset, pages) {
  const body = await api("read", { project: ref.project, scope: ref.scope, entry: ref.entryId, source: ref.source, offset });
  state.entry = ref;
  state.offset = offset;
  state.pages = pages;
  if (body.status !== "ok") {
    $("entry-head").textContent = `Entry ${body.entryId || ""}: ${body.status.replace("_", " ")}`;
    $("entry-meta").textContent = body.status === "ambiguous" ? "this id is in several sessions; pick one from search" : "";
    $("entry-range").textContent = "";
    $("entry-text").textContent = "";
    for (const id of ["entry-prev", "entry-next", "entry-around"]) $(id).disabled = true;
    show("entry");
    return;
  }
  state.entry = { ...ref, source: body.source };
  $("entry-head").replaceChildren(kindTag(body.kind), headLine(body));
  $("entry-meta").textContent = [body.role, body.toolName, body.cwd].filter((part) => part).join(" · ");
  const end = body.offset + body.text.length;
  $("entry-range").textContent = `characters ${body.offset}–${end} of ${body.totalChars}`;
  $("entry-text").textContent = body.text;
  $("entry-prev").disabled = pages.length === 0;
  $("entry-next").disabled = body.nextOffset === null;
  $("entry-next").dataset.offset = body.nextOffset === null ? "" : String(body.nextOffset);
  $("entry-around").disabled = false;
  show("entry");
  window.scrollTo(0, 0);
}

// -- around ---------------------------------------------------------------------------------------

async function openAround() {
  const ref = state.entry;
  const body = await api("around", { project: ref.project, scope: ref.scope, entry: ref.entryId, source: ref.source, before: AROUND, after: AROUND });
  $("around-head").textContent = `Around ${body.entryId}, oldest first`;
  const list = $("around-list");
  list.replaceChildren();
  for (const item of body.entries) {
    const classes = [item.position === "hit" ? "hit" : "", SUMMARY_KINDS[item.kind] ? "summary" : ""].join(" ").trim();
    const target = { entryId: item.entryId, source: item.source, project: ref.project, scope: ref.scope };
    list.append(
      el(
        "li",
        { class: classes, "data-position": item.position },
        el("button", { class: "head", type: "button", onclick: () => openEntry(target, 0, []) }, kindTag(item.kind), headLine(item)),
        el("p", { class: "text" }, item.text),
      ),
    );
  }
  show("around");
}

// -- sessions ---------------------------------------------------------------------------------

async function sessions() {
  const { project } = where();
  const body = await api("sessions", { project });
  const box = $("sessions-list");
  box.replaceChildren();
  for (const group of body.groups) {
    box.append(el("h2", {}, `${group.name} · ${group.sessions.length} session(s)${group.truncated ? ", newest shown" : ""}`));
    for (const session of group.sessions) {
      const card = el(
        "div",
        { class: "session" },
        el("h3", {}, `${session.started} · session ${session.sessionId}`),
        el("p", { class: "info" }, `${session.cwd} · ${session.bytes} bytes · ${session.summaries.length} summary(ies)`),
      );
      for (const summary of session.summaries) {
        const target = { entryId: summary.entryId, source: summary.source, project: group.project, scope: "project" };
        card.append(
          el(
            "div",
            { class: "summary-card" },
            el("button", { class: "head", type: "button", onclick: () => openEntry(target, 0, []) }, kindTag(summary.kind), headLine(summary)),
            el("p", { class: "text" }, summary.summary),
          ),
        );
      }
      box.append(card);
    }
  }
  show("sessions");
}

// -- status -----------------------------------------------------------------------------------

async function statusView() {
  const body = await api("status");
  const rows = [
    ["journals", body.journals],
    ["entries", body.entries],
    ["summaries", body.summaries],
    ["indexed", `${body.indexing.indexedJournals} of ${body.indexing.totalJournals} journals`],
    ["skipped", `${body.skipped.files} file(s), ${body.skipped.lines} line(s)`],
    ["backfill", body.lease ? `lease held by ${body.lease.owner} until ${body.lease.expiresAt}` : "none running"],
  ];
  $("status-list").replaceChildren(...rows.flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, String(value))]));
  indexing(body.indexing);
  show("status");
}

// -- wiring -----------------------------------------------------------------------------------

/** Runs a user action; <body aria-busy> while it runs, so a test (or a screen reader) can wait. */
function guarded(action) {
  return (event) => {
    if (event && event.preventDefault) event.preventDefault();
    showError(null);
    document.body.setAttribute("aria-busy", "true");
    action()
      .catch(showError)
      .finally(() => document.body.removeAttribute("aria-busy"));
  };
}

const VIEWS = { search, sessions, status: statusView };

async function start() {
  const meta = await api("meta");
  state.meta = meta;
  const project = /** @type {HTMLSelectElement} */ ($("project"));
  for (const item of meta.projects) {
    const option = el("option", { value: item.handle, title: item.root }, item.name);
    project.append(option);
  }
  project.append(el("option", { value: "all" }, "All projects"));
  project.value = meta.current;
  const scope = /** @type {HTMLSelectElement} */ ($("scope"));
  for (const name of meta.scopes) {
    if (name === "session" && !meta.session) continue;
    scope.append(el("option", { value: name }, SCOPE_LABELS[name] || name));
  }
  for (const kind of meta.kinds) $("kind").append(el("option", { value: kind }, kind));
  $("search-form").addEventListener("submit", guarded(search));
  for (const button of $("tabs").querySelectorAll("button")) {
    button.addEventListener("click", guarded(() => VIEWS[button.dataset.view]()));
  }
  project.addEventListener(
    "change",
    guarded(async () => {
      scope.value = project.value === "all" ? "global" : "project";
      await (state.view === "sessions" ? sessions() : search());
    }),
  );
  scope.addEventListener(
    "change",
    guarded(async () => {
      if (scope.value === "global") project.value = "all";
      else if (project.value === "all") project.value = meta.current;
      await search();
    }),
  );
  $("entry-back").addEventListener("click", () => show("search"));
  $("entry-prev").addEventListener("click", guarded(() => openEntry(state.entry, state.pages.at(-1), state.pages.slice(0, -1))));
  $("entry-next").addEventListener(
    "click",
    guarded(() => openEntry(state.entry, Number($("entry-next").dataset.offset), [...state.pages, state.offset])),
  );
  $("entry-around").addEventListener("click", guarded(openAround));
  $("around-back").addEventListener("click", () => show("entry"));
  await search();
}

guarded(start)();
