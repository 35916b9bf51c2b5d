// Re-draw the comparison table for the two systems picked; data comes from the JSON block in the page.
"use strict";
(function () {
  function fmt(v) {
    if (v === null || v === undefined) return "\u2014";
    return Math.abs(v) < 1e4 ? String(Number(v.toPrecision(3))) : Math.round(v).toLocaleString("en");
  }

  // The last step of suite/compare/ (stats.ratio_interval, engine.verdict), on the per-entry estimates the
  // build computed with it: [value, standard error of log(value), degrees of freedom, reason].
  function tQuantile(table, df) {
    return table[Math.min(Math.max(Math.floor(df), 1), table.length) - 1];
  }

  function ratioInterval(table, base, other) {
    if (base[0] === null || other[0] === null || base[0] <= 0 || other[0] <= 0) return null;
    var r = other[0] / base[0];
    if (base[1] === null || other[1] === null || base[2] === null || other[2] === null) {
      return {ratio: r, low: null, high: null};
    }
    var v = base[1] * base[1] + other[1] * other[1];
    if (v === 0) return {ratio: r, low: r, high: r};
    var df = v * v / (Math.pow(base[1], 4) / base[2] + Math.pow(other[1], 4) / other[2]);
    var half = tQuantile(table, df) * Math.sqrt(v);
    return {ratio: r, low: r * Math.exp(-half), high: r * Math.exp(half)};
  }

  // [interval text, verdict, why] of entry ea (first) against eb (second, the base)
  function judge(data, m, ea, eb) {
    var V = data.verdicts;
    if (!ea || !eb) return ["\u2014", "\u2014", ""];
    var diffs = Object.keys(eb.context).filter(function (k) { return ea.context[k] !== eb.context[k]; });
    if (diffs.length) {
      return ["\u2014", V.apart, diffs.map(function (k) {
        return k + " differs (" + eb.context[k] + " / " + ea.context[k] + ")";
      }).join("; ")];
    }
    var a = ea.figures[m.figure], b = eb.figures[m.figure];
    if (a[0] === null || b[0] === null) return ["\u2014", "not measured", a[3] || b[3] || ""];
    if (m.figure === "energy_per_sample" && ea.energy.join() !== eb.energy.join()) {
      return ["\u2014", V.apart, "energy measured another way"];
    }
    var ri = ratioInterval(data.t, b, a);
    if (!ri || ri.low === null) return ["\u2014", V.none, a[3] || b[3] || ""];
    var higher = m.better === "higher", verdict = V.same;
    if (ri.low > 1) verdict = higher ? V.faster : V.slower;
    else if (ri.high < 1) verdict = higher ? V.slower : V.faster;
    return [fmt(ri.low) + "\u2013" + fmt(ri.high), verdict, ""];
  }

  // a value as the build wrote it, with its unit (data.texts), else as a bare number
  function shown(data, system, key, m, v) {
    var t = ((data.texts || {})[system] || {})[key];
    return t && t[m.id] !== undefined ? t[m.id] : fmt(v);
  }

  // a row of the table; each cell labelled with its column's name (a phone shows rows as cards)
  function row(cells) {
    var tr = document.createElement("tr");
    var heads = document.querySelectorAll("#compare-table thead th");
    cells.forEach(function (text, i) {
      var td = document.createElement("td");
      td.textContent = text;
      if (heads[i]) td.setAttribute("data-label", heads[i].textContent);
      tr.appendChild(td);
    });
    return tr;
  }

  function draw(data, a, b) {
    var body = document.querySelector("#compare-table tbody");
    document.getElementById("compare-head-a").textContent = a;
    document.getElementById("compare-head-b").textContent = b;
    while (body.firstChild) body.removeChild(body.firstChild);
    var va = data.values[a] || {}, vb = data.values[b] || {};
    var est = data.estimates || {}, ea = est[a] || {}, eb = est[b] || {};
    data.keys.forEach(function (key) {
      if (!va[key] && !vb[key]) return;
      data.metrics.forEach(function (m) {
        var x = va[key] ? va[key][m.id] : null, y = vb[key] ? vb[key][m.id] : null;
        if (x === null && y === null) return;
        var ratio = x !== null && y ? Number((x / y).toPrecision(3)) + "\u00d7" : "\u2014";
        var j = judge(data, m, ea[key], eb[key]);
        var tr = row([key, m.label, shown(data, a, key, m, x), shown(data, b, key, m, y), ratio, j[0], j[1], m.better]);
        if (j[2]) tr.cells[6].title = j[2];
        body.appendChild(tr);
      });
    });
    if (!body.rows.length) {
      body.appendChild(row(["No shared results for these two systems.", "", "", "", "", "", "", ""]));
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var block = document.getElementById("compare-data");
    if (!block) return;
    var data = JSON.parse(block.textContent);
    var pickA = document.getElementById("compare-a"), pickB = document.getElementById("compare-b");
    if (data.systems.length < 2) return;  // nothing to pick: the table says why
    document.getElementById("compare-form").hidden = false;
    function update() { draw(data, pickA.value, pickB.value); }
    pickA.addEventListener("change", update);
    pickB.addEventListener("change", update);
  });
})();
