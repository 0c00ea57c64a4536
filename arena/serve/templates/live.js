// The ladder page, live: every few seconds it reads the ladder's JSON (/api/ladders/ID, the
// page of the standings the page shows: its cursor and limit) and redraws the standings
// table, its "higher"/"lower ranks" links, the matches being played and the match count in
// place. Without script the page is a plain one, complete as served: a reload shows the
// same. Every name is set as text, never as markup (bot names are their authors' to choose).
(function () {
  "use strict";
  var POLL_MS = 3000;
  var table = document.querySelector("table.ladder[data-ladder]");
  if (!table || !window.fetch) { return; }
  var body = table.querySelector("tbody");
  var count = document.getElementById("match-count");
  var pager = document.getElementById("standings-pager");
  var playing = document.querySelector("ul.playing");
  var nothing = document.getElementById("playing-none");
  var query = new URLSearchParams();
  if (table.getAttribute("data-limit")) { query.set("limit", table.getAttribute("data-limit")); }
  if (table.getAttribute("data-cursor")) {   // this page's place, in the ratings of now
    query.set("cursor", table.getAttribute("data-cursor"));
    query.set("live", "1");
  }
  var url = "/api/ladders/" + encodeURIComponent(table.getAttribute("data-ladder")) +
    (query.toString() ? "?" + query.toString() : "");

  function cell(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== null) { node.textContent = text; }
    if (className) { node.className = className; }
    return node;
  }

  function elo(value, games) {   // as the page's `elo` filter writes it
    if (!games || value === null) { return "-"; }
    return (value < 0 ? "-" : "+") + Math.abs(value).toFixed(0);
  }

  function bars(rows) {   // where each interval bar goes, as LadderView.bar places it
    var known = rows.filter(function (row) { return row.interval !== null; });
    if (!known.length) { return function () { return null; }; }
    var low = Math.min.apply(null, known.map(function (r) { return r.elo - r.interval; }));
    var high = Math.max.apply(null, known.map(function (r) { return r.elo + r.interval; }));
    var span = Math.max(high - low, 1);
    return function (row) {
      if (row.interval === null) { return null; }
      return {left: (row.elo - row.interval - low) / span * 100,
              width: Math.max(2 * row.interval / span * 100, 0.5),
              mark: (row.elo - low) / span * 100};
    };
  }

  function rowOf(row, bar) {
    var tr = cell("tr", null, "ladder-row" + (row.provisional ? " provisional" : ""));
    tr.setAttribute("data-bot", row.bot);
    tr.setAttribute("data-elo", row.elo);
    tr.setAttribute("data-interval", row.interval === null ? "" : row.interval);
    tr.setAttribute("data-provisional", row.provisional ? "yes" : "no");
    tr.setAttribute("data-games", row.games);
    tr.appendChild(cell("td", String(row.rank)));
    var name = cell("td", null, "l");
    var link = cell("a", row.bot);
    link.href = "/bots/" + row.bot.split("/").map(encodeURIComponent).join("/");
    name.appendChild(link);
    if (row.provisional) {
      name.appendChild(document.createTextNode(" "));
      var mark = cell("span", "provisional", "provisional-mark");
      mark.title = "provisional rating";
      name.appendChild(mark);
    }
    tr.appendChild(name);
    var version = cell("td", null, "l");
    version.appendChild(cell("code", String(row.version).slice(0, 8)));
    tr.appendChild(version);
    tr.appendChild(cell("td", elo(row.elo, row.games)));
    tr.appendChild(cell("td", row.interval === null ? "-" : row.interval.toFixed(0)));
    tr.appendChild(cell("td", String(row.games)));
    var chart = cell("td", null, "l");
    var placed = bar(row);
    if (placed) {
      var box = cell("div", null, "bar");
      box.title = (row.elo - row.interval).toFixed(0) + " to " + (row.elo + row.interval).toFixed(0);
      var spanned = cell("div", null, "span");
      spanned.style.left = placed.left.toFixed(2) + "%";
      spanned.style.width = placed.width.toFixed(2) + "%";
      var dot = cell("div", null, "mark");
      dot.style.left = placed.mark.toFixed(2) + "%";
      box.appendChild(spanned);
      box.appendChild(dot);
      chart.appendChild(box);
    } else {
      chart.appendChild(cell("span", "not yet known", "notes"));
    }
    tr.appendChild(chart);
    return tr;
  }

  function pageLink(cursor, rel, className, text) {   // as app.page_links makes them
    var query = new URLSearchParams(window.location.search);
    query.set("standings_cursor", cursor);
    var link = cell("a", text, className);
    link.href = window.location.pathname + "?" + query.toString() + "#standings";
    link.rel = rel;
    return link;
  }

  function redrawPager(ladder) {
    if (!pager) { return; }
    var line = cell("p", null, "pager");
    if (ladder.newer_cursor) { line.appendChild(pageLink(ladder.newer_cursor, "prev", "newer", "higher ranks")); }
    if (ladder.newer_cursor && ladder.next_cursor) { line.appendChild(document.createTextNode(" · ")); }
    if (ladder.next_cursor) { line.appendChild(pageLink(ladder.next_cursor, "next", "older", "lower ranks")); }
    pager.replaceChildren(line.childNodes.length ? line : document.createDocumentFragment());
  }

  function redrawPlaying(matches) {
    if (!playing) { return; }
    var fresh = document.createDocumentFragment();
    matches.forEach(function (match) {
      var item = cell("li", null, "playing-match");
      item.setAttribute("data-id", match.id);
      item.appendChild(cell("code", match.id));
      item.appendChild(document.createTextNode(": "));
      match.bots.forEach(function (label, index) {
        if (index) { item.appendChild(document.createTextNode(" · ")); }
        var link = cell("a", label);
        link.href = "/bots/" + label.split("@")[0].split("/").map(encodeURIComponent).join("/");
        item.appendChild(link);
      });
      fresh.appendChild(item);
    });
    playing.replaceChildren(fresh);
    if (nothing) { nothing.hidden = matches.length > 0; }
  }

  function redraw(ladder) {
    var rows = ladder.ladder, bar = bars(rows), fresh = document.createDocumentFragment();
    rows.forEach(function (row, index) {
      if (row.provisional && (index === 0 || !rows[index - 1].provisional)) {
        var head = cell("tr", null, "provisional-head");
        var th = cell("th", "Provisional ratings (ranked below the established ones)", "l");
        th.colSpan = 7;
        head.appendChild(th);
        fresh.appendChild(head);
      }
      fresh.appendChild(rowOf(row, bar));
    });
    body.replaceChildren(fresh);
    redrawPager(ladder);
    redrawPlaying(ladder.playing || []);
    if (count) { count.textContent = String(ladder.matches); }
    table.setAttribute("data-updated", String(Date.now()));
  }

  function poll() {
    if (document.hidden) { return; }   // a tab out of sight asks nothing
    fetch(url, {headers: {"Accept": "application/json"}, cache: "no-store"})
      .then(function (answer) { return answer.ok ? answer.json() : null; })
      .then(function (ladder) { if (ladder) { redraw(ladder); } })
      .catch(function () {});   // the service restarting: the next poll tries again
  }

  window.setInterval(poll, POLL_MS);
})();
