// Sort and filter the leaderboard tables in place. The tables are complete without this file.
"use strict";
(function () {
  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) return numeric ? NaN : "";
    if (numeric) {
      var raw = cell.getAttribute("data-v");
      return raw === null || raw === "" ? NaN : parseFloat(raw);
    }
    return cell.textContent.trim().toLowerCase();
  }

  function sortBy(table, index, header) {
    var numeric = header.getAttribute("data-kind") === "num";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      // a row stored under older rules that today's find problems in never sorts above today's rows
      var older = a.classList.contains("older-rules") - b.classList.contains("older-rules");
      if (older) return older;
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (numeric) {  // missing values ("—") always last
        if (isNaN(x)) return isNaN(y) ? 0 : 1;
        if (isNaN(y)) return -1;
        return ascending ? x - y : y - x;
      }
      return ascending ? x.localeCompare(y) : y.localeCompare(x);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  function makeSortable(table) {
    table.classList.add("sorts");  // its header is now sort buttons: labelled "sort by" where they wrap into chips
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = th.textContent;
      // a header that says what it means keeps saying it (the button's tooltip hides the header's)
      button.title = th.title ? th.title + " (click to sort)" : "sort by " + th.textContent;
      th.textContent = "";
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(table, index, th); });
    });
  }

  function makeFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter-for"));
    if (!table) return;
    input.closest(".filter").hidden = false;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) !== -1; });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter-for]"), makeFilter);
  });
})();
