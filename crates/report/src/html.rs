//! The self-contained HTML report of a comparison: one file that opens offline.
//!
//! Charts are drawn by Chart.js (v4.6.1, MIT; `assets/chart.umd.min.js`, inlined with
//! `include_str!`), fed by one JSON block in the page. The page holds:
//! * one chart per metric: the mean (Hmean/Amean by kind) against the sweep points, one line per
//!   variant, with a min–max band over the runs;
//! * one latency CDF per distribution and sweep point (percentile against latency, on a log
//!   axis when all latencies are positive), one line per variant (each percentile averaged over
//!   the runs);
//! * a per-CPU timeline of one run from `trace.json` (see [`crate::timeline`]), or the words
//!   "no trace recorded".
//!
//! After drawing, the page's script writes, into `<pre id="wakesim-summary">`, one line per
//! chart (`<id>: <n> series (expected <m>)`, n counted from what Chart.js drew) and any
//! script error into `<pre id="wakesim-errors">`, so a headless browser's `--dump-dom` shows
//! whether the page worked.

use crate::percentiles::{latency_names, mean_at};
use crate::summary::{mean_name, Summary};
use crate::timeline::Timeline;
use crate::{Grid, CDF_PERCENTILES};
use serde_json::{json, Value};

const CHART_JS: &str = include_str!("../assets/chart.umd.min.js");

/// Tasks drawn in their own colour on the timeline; the rest share one series, "other".
pub const TIMELINE_TASKS: usize = 12;

/// What goes on the page.
pub struct Page<'a> {
    pub title: String,
    /// Lines shown under the title (machine, kernel, the command…).
    pub notes: Vec<String>,
    pub grid: &'a Grid,
    /// The timeline of one run, if a trace was recorded.
    pub timeline: Option<&'a Timeline>,
}

/// How many series each chart of the page draws: (chart id, series), in page order.
pub fn expected_series(p: &Page) -> Vec<(String, usize)> {
    let d = data(p);
    let mut v = Vec::new();
    for key in ["metrics", "cdfs"] {
        for c in d[key].as_array().into_iter().flatten() {
            v.push((c["id"].as_str().unwrap_or("").to_string(), c["series"].as_array().map_or(0, Vec::len)));
        }
    }
    if let Some(t) = d["timeline"].as_object() {
        v.push(("timeline".into(), t["tasks"].as_array().map_or(0, Vec::len)));
    }
    v
}

fn data(p: &Page) -> Value {
    let g = p.grid;
    let labels: Vec<String> = (0..g.cells.len()).map(|i| g.point_values(i)).collect();
    let metrics: Vec<Value> = g
        .metric_kinds()
        .iter()
        .enumerate()
        .map(|(i, (name, unit, hib))| {
            let series: Vec<Value> = g
                .variants
                .iter()
                .enumerate()
                .map(|(v, vn)| {
                    let s: Vec<Summary> = (0..g.cells.len()).map(|pt| Summary::of(&g.values(pt, v, name))).collect();
                    json!({"name": vn, "mean": s.iter().map(|x| x.mean(*hib)).collect::<Vec<_>>(),
                           "min": s.iter().map(|x| x.min).collect::<Vec<_>>(), "max": s.iter().map(|x| x.max).collect::<Vec<_>>()})
                })
                .collect();
            json!({"id": format!("metric-{i}"), "title": format!("{} {name} ({unit}), {} of runs, min–max band", g.workload, mean_name(*hib)),
                   "x": g.sweeps.join(","), "y": unit, "labels": labels, "series": series})
        })
        .collect();
    let mut cdfs = Vec::new();
    for name in latency_names(g) {
        let unit = g.cells[0][0].first().and_then(|r| r.latencies.iter().find(|l| l.name == name)).map_or(String::new(), |l| l.unit.clone());
        for pt in 0..g.cells.len() {
            let series: Vec<Value> = g
                .variants
                .iter()
                .enumerate()
                .map(|(v, vn)| {
                    let pts: Vec<Value> = CDF_PERCENTILES.iter().map(|&q| json!({"x": mean_at(g, pt, v, &name, q), "y": q})).filter(|p| p["x"].as_f64().is_some()).collect();
                    json!({"name": vn, "points": pts})
                })
                .collect();
            cdfs.push(json!({"id": format!("cdf-{}", cdfs.len()), "title": format!("{name} CDF ({unit}), {}", g.point_label(pt)), "x": unit, "series": series}));
        }
    }
    let timeline = p.timeline.map(|t| {
        let all = t.tasks();
        let mut tasks: Vec<String> = all.iter().take(TIMELINE_TASKS).cloned().collect();
        if all.len() > TIMELINE_TASKS {
            tasks.push("other".into());
        }
        let cpus = t.cpus();
        let slices: Vec<Value> = t
            .slices
            .iter()
            .map(|s| {
                let k = all.iter().position(|n| *n == s.name).unwrap_or(0).min(TIMELINE_TASKS);
                json!([s.cpu, s.start, s.start + s.dur, k])
            })
            .collect();
        json!({"cpus": cpus, "tasks": tasks, "slices": slices, "dropped": t.dropped})
    });
    json!({"title": p.title, "metrics": metrics, "cdfs": cdfs, "timeline": timeline})
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page.
pub fn render(p: &Page) -> String {
    // `</` cannot appear inside a <script> element; `<\/` is the same JSON string.
    let json = serde_json::to_string(&data(p)).unwrap_or_else(|_| "{}".into()).replace("</", "<\\/");
    let notes: String = p.notes.iter().map(|n| format!("<div class=\"note\">{}</div>\n", esc(n))).collect();
    let mut s = String::new();
    s += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    s += &format!("<title>{}</title>\n", esc(&p.title));
    s += "<style>body{font-family:sans-serif;margin:1.5em;max-width:1000px}h2{margin-top:1.5em}.note{font-family:monospace;font-size:90%;color:#444}canvas{border:1px solid #ddd;margin:.5em 0}#wakesim-summary,#wakesim-errors{font-size:80%;color:#555}</style>\n";
    s += "<script>window.wakesimErrors=[];window.addEventListener('error',function(e){window.wakesimErrors.push(String(e.message||e));});</script>\n";
    s += &format!("<script>{CHART_JS}</script>\n");
    s += "</head>\n<body>\n";
    s += &format!("<h1>{}</h1>\n{notes}", esc(&p.title));
    s += "<h2>Metrics against the sweep</h2>\n<div id=\"metrics\"></div>\n";
    s += "<h2>Latency CDFs</h2>\n<div id=\"cdfs\"></div>\n";
    s += "<h2>Per-CPU timeline of one run</h2>\n<div id=\"timeline\"></div>\n";
    s += "<h2>Page check</h2>\n<pre id=\"wakesim-summary\"></pre>\n<pre id=\"wakesim-errors\"></pre>\n";
    s += &format!("<script type=\"application/json\" id=\"wakesim-data\">{json}</script>\n");
    s += "<script>\n";
    s += PAGE_JS;
    s += "</script>\n</body>\n</html>\n";
    s
}

/// Draws the charts from `#wakesim-data` and writes the page check.
const PAGE_JS: &str = r#"(function () {
  var D = JSON.parse(document.getElementById('wakesim-data').textContent);
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#aaaaaa'];
  var summary = [];
  Chart.defaults.animation = false;
  function canvas(parent, id, title, expected) {
    var h = document.createElement('h3'); h.textContent = title; parent.appendChild(h);
    var c = document.createElement('canvas'); c.id = id; c.width = 900; c.height = 340;
    c.setAttribute('data-expected-series', String(expected)); parent.appendChild(c);
    return c;
  }
  function check(id, chart, expected) {
    var n = chart.getSortedVisibleDatasetMetas().filter(function (m) { return !chart.data.datasets[m.index].band; }).length;
    summary.push(id + ': ' + n + ' series (expected ' + expected + ')');
  }
  var noBand = { labels: { filter: function (item, data) { return !data.datasets[item.datasetIndex].band; } } };
  try {
    var mdiv = document.getElementById('metrics');
    D.metrics.forEach(function (m) {
      var ds = [];
      m.series.forEach(function (s, i) {
        var col = palette[i % palette.length];
        ds.push({ label: s.name + ' min', data: s.min, band: true, borderWidth: 0, pointRadius: 0, fill: false });
        ds.push({ label: s.name + ' max', data: s.max, band: true, borderWidth: 0, pointRadius: 0, fill: '-1', backgroundColor: col + '33' });
        ds.push({ label: s.name, data: s.mean, borderColor: col, backgroundColor: col, fill: false });
      });
      var c = canvas(mdiv, m.id, m.title, m.series.length);
      var chart = new Chart(c, { type: 'line', data: { labels: m.labels, datasets: ds },
        options: { responsive: false, plugins: { legend: noBand }, scales: { x: { title: { display: true, text: m.x || 'point' } }, y: { title: { display: true, text: m.y } } } } });
      check(m.id, chart, m.series.length);
    });
    var cdiv = document.getElementById('cdfs');
    if (D.cdfs.length === 0) { cdiv.textContent = 'no latency data'; }
    D.cdfs.forEach(function (m) {
      var ds = m.series.map(function (s, i) {
        var col = palette[i % palette.length];
        return { label: s.name, data: s.points, borderColor: col, backgroundColor: col, pointRadius: 1, fill: false };
      });
      var c = canvas(cdiv, m.id, m.title, m.series.length);
      // Latencies span decades: a log axis when every value is positive.
      var positive = m.series.every(function (s) { return s.points.every(function (p) { return p.x > 0; }); });
      var chart = new Chart(c, { type: 'line', data: { datasets: ds },
        options: { responsive: false, scales: { x: { type: positive ? 'logarithmic' : 'linear', title: { display: true, text: m.x + (positive ? ' (log scale)' : '') } }, y: { type: 'linear', min: 0, max: 100, title: { display: true, text: 'percentile' } } } } });
      check(m.id, chart, m.series.length);
    });
    var tdiv = document.getElementById('timeline');
    var T = D.timeline;
    if (!T) {
      tdiv.textContent = 'no trace recorded';
    } else {
      var labels = T.cpus.map(function (c) { return 'CPU ' + c; });
      var ds = T.tasks.map(function (name, i) {
        var col = palette[i % palette.length];
        return { label: name, data: [], backgroundColor: col, borderColor: col, grouped: false, barPercentage: 0.8 };
      });
      T.slices.forEach(function (s) { ds[s[3]].data.push({ x: [s[1], s[2]], y: 'CPU ' + s[0] }); });
      var c = canvas(tdiv, 'timeline-chart', 'Which task ran on each CPU (µs)' + (T.dropped ? ' — first slices only, ' + T.dropped + ' more not drawn' : ''), T.tasks.length);
      c.height = Math.max(160, 28 * labels.length + 80);
      var chart = new Chart(c, { type: 'bar', data: { labels: labels, datasets: ds },
        options: { responsive: false, indexAxis: 'y', scales: { x: { type: 'linear', title: { display: true, text: 'µs' } }, y: { type: 'category' } } } });
      check('timeline', chart, T.tasks.length);
    }
  } catch (e) {
    window.wakesimErrors.push(String(e && e.stack || e));
  }
  document.getElementById('wakesim-summary').textContent = summary.join('\n');
  document.getElementById('wakesim-errors').textContent = window.wakesimErrors.length ? 'errors: ' + window.wakesimErrors.join('; ') : 'errors: none';
})();
"#;
