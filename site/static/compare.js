// Re-draw the comparison table for the two systems picked; data comes from the JSON block in the page.
"use strict";
(function () {
  function fmt(v) {
    if (v === null || v === undefined) return "\u2014";
    return Math.abs(v) < 1e4 ? String(Number(v.toPrecision(3))) : Math.round(v).toLocaleString("en");
  }

  function row(cells) {
    var tr = document.createElement("tr");
    cells.forEach(function (text) {
      var td = document.createElement("td");
      td.textContent = text;
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
    data.keys.forEach(function (key) {
      if (!va[key] && !vb[key]) return;
      data.metrics.forEach(function (m) {
        var x = va[key] ? va[key][m.id] : null, y = vb[key] ? vb[key][m.id] : null;
        if (x === null && y === null) return;
        var ratio = x !== null && y ? Number((x / y).toPrecision(3)) + "\u00d7" : "\u2014";
        body.appendChild(row([key, m.label, fmt(x), fmt(y), ratio, m.better]));
      });
    });
    if (!body.rows.length) {
      body.appendChild(row(["No shared results for these two systems.", "", "", "", "", ""]));
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var block = document.getElementById("compare-data");
    if (!block) return;
    var data = JSON.parse(block.textContent);
    var pickA = document.getElementById("compare-a"), pickB = document.getElementById("compare-b");
    document.getElementById("compare-form").hidden = false;
    function update() { draw(data, pickA.value, pickB.value); }
    pickA.addEventListener("change", update);
    pickB.addEventListener("change", update);
  });
})();
