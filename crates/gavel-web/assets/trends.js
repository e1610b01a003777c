// Draws the trends charts: pass rate and mean score per run over time, one chart
// per suite, tag, target and judge model. Data from /api/trends; uPlot draws.
(function () {
  const root = document.getElementById("charts");
  if (!root) return;
  fetch(root.dataset.api, { credentials: "same-origin" })
    .then((r) => r.json())
    .then((trend) => {
      const groups = new Map();
      for (const p of trend.points) {
        const name = p.dimension === "overall" ? "suite " + p.suite : p.dimension + " " + p.key + " (" + p.suite + ")";
        if (!groups.has(name)) groups.set(name, []);
        groups.get(name).push(p);
      }
      if (groups.size === 0) {
        root.textContent = "No run with results yet.";
      }
      let n = 0;
      for (const [name, pts] of groups) {
        const box = document.createElement("div");
        box.className = "chart";
        box.id = "chart-" + n++;
        const title = document.createElement("h2");
        title.textContent = name;
        box.appendChild(title);
        root.appendChild(box);
        const xs = pts.map((p) => Date.parse(p.started_at) / 1000);
        const rate = pts.map((p) => p.pass_rate);
        const score = pts.map((p) => (p.mean_score === null ? null : 100 * p.mean_score));
        const plot = new uPlot(
          {
            width: Math.min(900, root.clientWidth || 900),
            height: 260,
            scales: { y: { range: [0, 100] } },
            series: [
              {},
              { label: "pass rate %", stroke: "#137333", width: 2, points: { size: 7 } },
              { label: "mean score ×100", stroke: "#1a56c4", width: 2, points: { size: 7 } },
            ],
          },
          [xs, rate, score],
          box
        );
        // A click on the chart opens the run under the cursor.
        plot.over.addEventListener("click", function () {
          const i = plot.cursor.idx;
          if (i != null && pts[i]) window.location.href = "/runs/" + encodeURIComponent(pts[i].run_id);
        });
        plot.over.title = "Click a point to open its run";
        // Every point is also a link, for keyboards and screen readers.
        const list = document.createElement("ol");
        list.className = "points";
        for (const p of pts) {
          const item = document.createElement("li");
          const link = document.createElement("a");
          link.href = "/runs/" + encodeURIComponent(p.run_id);
          link.textContent = p.started_at.slice(0, 16).replace("T", " ") + ": " +
            (p.pass_rate === null ? "no decided case" : Math.round(p.pass_rate) + "% passed") +
            (p.mean_score === null ? "" : ", mean score " + p.mean_score.toFixed(2));
          item.appendChild(link);
          list.appendChild(item);
        }
        box.appendChild(list);
      }
      root.dataset.ready = "true";
    })
    .catch((e) => {
      root.textContent = "Cannot load the trends: " + e;
    });
})();
