// The live run page: results stream in as they are stored (server-sent events
// from the run engine), with a progress bar, counts, an estimate of the time
// left, and a filter to failures, errors and skips. Text is set with
// textContent, never as markup.
(function () {
  const panel = document.getElementById("live");
  if (!panel || !window.EventSource) return;
  const run = panel.dataset.run;
  const bar = document.getElementById("live-bar");
  const counts = { pass: 0, fail: 0, error: 0, skipped: 0 };
  const rows = document.getElementById("live-rows");
  const eta = document.getElementById("live-eta");
  const filter = document.getElementById("live-filter");
  let planned = 0;

  function show() {
    for (const word of Object.keys(counts)) {
      const el = document.getElementById("live-" + word);
      if (el) el.textContent = String(counts[word]);
    }
  }
  function visible(row) {
    const want = filter ? filter.value : "all";
    return want === "all" || (want === "problems" ? row.dataset.status !== "pass" : row.dataset.status === want);
  }
  if (filter) {
    filter.addEventListener("change", function () {
      for (const row of rows.querySelectorAll("tr")) row.hidden = !visible(row);
    });
  }
  const source = new EventSource("/runs/" + encodeURIComponent(run) + "/events");
  source.onmessage = function (message) {
    let e;
    try { e = JSON.parse(message.data); } catch (_) { return; }
    if (e.type === "started") {
      planned = e.planned;
      if (e.judge) document.getElementById("live-judge").textContent = e.judge;
    } else if (e.type === "result") {
      planned = e.planned;
      // The server's running totals: right even when the page opened mid-run.
      for (const word of Object.keys(counts)) counts[word] = e.counts[word] || 0;
      show();
      if (planned > 0) {
        bar.max = planned;
        bar.value = e.done;
        bar.textContent = e.done + " / " + planned;
      }
      eta.textContent = e.eta_s == null ? "" : "about " + Math.ceil(e.eta_s) + " s left";
      const row = document.createElement("tr");
      row.dataset.status = e.status;
      const cells = [e.status, e.case_name + " (" + e.case_id + ")", e.target, String(e.repeat_index),
        e.score == null ? "" : e.score.toFixed(2), e.duration_ms + " ms"];
      cells.forEach(function (text, i) {
        const td = document.createElement("td");
        td.textContent = text;
        if (i === 0) td.className = "status " + e.status;
        row.appendChild(td);
      });
      row.hidden = !visible(row);
      rows.appendChild(row);
    } else if (e.type === "finished") {
      source.close();
      window.location.reload();
    }
  };
})();
