// Draws the conformance report from the JSON block above. Every value in it came from an
// adapter or a report file, so it only ever goes into the page as text (textContent).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const root = document.getElementById("report");
  const SHORT = { pass: "pass", fail: "fail", error: "error", not_applicable: "n/a", xfail: "xfail", xpass: "xpass", not_run: "not run" };
  const WORST = ["error", "fail", "xpass", "xfail", "not_run", "pass", "not_applicable"];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    for (const child of children) node.append(child);
    return node;
  }

  function status(counts) {
    return WORST.find((outcome) => counts[outcome] > 0) || "none";
  }

  function cell(counts) {
    if (!counts) return el("td", { class: "cell none" }, "—");
    const total = Object.values(counts).reduce((sum, count) => sum + count, 0);
    const applicable = total - (counts.not_applicable || 0);
    const detail = data.outcomes
      .filter((outcome) => counts[outcome])
      .map((outcome) => `${counts[outcome]} ${SHORT[outcome]}`)
      .join(" · ");
    const headline = applicable ? `${counts.pass}/${applicable}` : "n/a";
    return el("td", { class: `cell ${status(counts)}`, "data-status": status(counts) }, headline, el("span", { class: "counts" }, detail));
  }

  function implName(impl) {
    return impl.label;
  }

  function matrix(title, rows, columns, lookup) {
    root.append(el("h2", {}, title));
    const head = el("tr", {}, el("th", {}, ""), ...columns.map((column) => el("th", {}, column.label)));
    const body = rows.map((row) => el("tr", {}, el("th", {}, row.label), ...columns.map((column) => cell(lookup(row, column)))));
    root.append(el("div", { class: "wide" }, el("table", { class: "matrix" }, el("thead", {}, head), el("tbody", {}, ...body))));
  }

  function json(value) {
    return el("pre", {}, JSON.stringify(value, null, 2));
  }

  function failure(impl, item) {
    const summary = el(
      "summary",
      {},
      el("span", { class: `outcome ${item.outcome}` }, SHORT[item.outcome]),
      `${item.id} · ${item.requirements.join(", ")}`,
    );
    const details = el("details", { "data-case": item.id }, summary, el("p", { class: "muted" }, item.description));
    if (item.reason) details.append(el("p", {}, `reason: ${item.reason}`));
    if (item.error) details.append(el("div", { class: "label" }, "error"), json(item.error));
    for (const step of item.steps) {
      details.append(
        el(
          "div",
          { class: "step" },
          el("h3", {}, `step ${step.step}`),
          el("div", { class: "label" }, "request"),
          json(step.request),
          el(
            "div",
            { class: "pair" },
            el("div", { class: "expected" }, el("div", { class: "label" }, "expected"), json(step.expected)),
            el("div", { class: "actual" }, el("div", { class: "label" }, "actual"), json(step.mismatches)),
          ),
        ),
      );
    }
    return details;
  }

  const impls = data.implementations;
  const distinct = (key) => [...new Set(impls.map((impl) => impl[key]))].join(", ");
  document.getElementById("about").textContent = `${impls.length} implementation(s) · spec ${distinct("spec_version")} · pimem-conformance ${distinct("suite_version")}`;

  root.replaceChildren();
  root.append(el("h2", {}, "Implementations"));
  const summaryRows = impls.map((impl) =>
    el(
      "tr",
      {},
      el("th", {}, implName(impl)),
      el("td", {}, impl.language),
      el("td", { class: "spec" }, impl.spec_version),
      el("td", {}, impl.claimed_profiles.join(", ")),
      cell(impl.totals),
      el("td", {}, impl.started || ""),
    ),
  );
  root.append(
    el(
      "table",
      { id: "implementations" },
      el("thead", {}, el("tr", {}, ...["implementation", "language", "scored as of spec", "profiles", "cases", "run"].map((name) => el("th", {}, name)))),
      el("tbody", {}, ...summaryRows),
    ),
  );

  const rows = impls.map((impl) => ({ label: implName(impl), impl }));
  const columns = [
    ...data.areas.map((area) => ({ label: area, group: "areas", key: area })),
    ...data.profiles.map((profile) => ({ label: `profile ${profile}`, group: "profiles", key: profile })),
  ];
  matrix("Areas and profiles", rows, columns, (row, column) => row.impl[column.group][column.key]);
  matrix(
    "Requirements",
    data.requirements.map((requirement) => ({ label: requirement, key: requirement })),
    impls.map((impl) => ({ label: implName(impl), impl })),
    (row, column) => column.impl.requirements[row.key],
  );

  if (data.secret_kinds.length) {
    root.append(el("h2", {}, "Secrets corpus: recall per kind"));
    const recall = (tally) => {
      if (!tally) return el("td", { class: "cell none" }, "not run");
      const status = tally.caught === tally.planted ? "pass" : "fail";
      return el("td", { class: `cell ${status}`, "data-status": status }, `${tally.caught}/${tally.planted}`, el("span", { class: "counts" }, `recall ${(tally.recall * 100).toFixed(1)} %`));
    };
    const head = el("tr", {}, el("th", {}, "kind"), ...impls.map((impl) => el("th", {}, implName(impl))));
    const all = el("tr", {}, el("th", {}, "all secrets"), ...impls.map((impl) => recall(impl.corpus && impl.corpus.secrets)));
    const lookalikes = el(
      "tr",
      {},
      el("th", {}, "look-alikes changed"),
      ...impls.map((impl) => {
        const tally = impl.corpus && impl.corpus.lookalikes;
        if (!tally) return el("td", { class: "cell none" }, "not run");
        const status = tally.false_positives ? "fail" : "pass";
        return el("td", { class: `cell ${status}`, "data-status": status }, `${tally.false_positives}/${tally.planted}`);
      }),
    );
    const rows = data.secret_kinds.map((kind) =>
      el("tr", {}, el("th", {}, kind), ...impls.map((impl) => recall(impl.corpus && impl.corpus.secret_kinds[kind]))),
    );
    root.append(el("div", { class: "wide" }, el("table", { id: "corpus" }, el("thead", {}, head), el("tbody", {}, all, lookalikes, ...rows))));
  }

  root.append(el("h2", {}, "Failing cases"));
  for (const impl of impls) {
    root.append(el("h3", {}, `${implName(impl)}: ${impl.failures.length} failing case(s)`));
    const list = el("div", { class: "failures", "data-impl": impl.name });
    for (const item of impl.failures) list.append(failure(impl, item));
    root.append(list);
  }
})();
