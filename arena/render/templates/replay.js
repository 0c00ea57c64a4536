// The replay viewer (arena/render/replay.py). Every text shown comes from the JSON data
// (bots wrote some of it): it is only ever set as textContent of nodes built here.
"use strict";
const data = JSON.parse(document.getElementById("replay-data").textContent);
const frames = [];   // frame K: {seat, move, legal, ms, cpu_ms, clock, pub, own: [per seat]}
(function unpack() {   // each stored frame holds what changed since the one before
  function patched(before, changes) {   // a list's changes: {"~": {index: item}}
    const after = Object.assign({}, before);
    for (const [key, value] of Object.entries(changes)) {
      if (value && typeof value === "object" && !Array.isArray(value) && "~" in value) {
        after[key] = before[key].slice();
        for (const [index, item] of Object.entries(value["~"])) after[key][Number(index)] = item;
      } else {
        after[key] = value;
      }
    }
    return after;
  }
  let pub = {}, own = data.names.map(() => ({}));
  for (const frame of data.frames) {
    pub = patched(pub, frame.p);
    own = own.map((mine, seat) => patched(mine, frame.o[seat]));
    frames.push(Object.assign({}, frame, {pub, own}));
  }
})();

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function add(parent, ...children) {
  for (const child of children) if (child) parent.appendChild(child);
  return parent;
}
function row(label, ...content) {
  return add(el("div", "row"), el("span", "label", label), ...content);
}
function safeClass(text) {   // a colour name as a class: letters only
  return String(text).replace(/[^a-z]/g, "");
}
function card(colour, text, extra) {
  const node = el("span", "card c-" + safeClass(colour) + (extra ? " " + extra : ""), text);
  node.title = colour;
  return node;
}
function cards(list, extra) {
  const box = el("span", "cards");
  for (const colour of list || []) add(box, card(colour, "", extra));
  if (!list || !list.length) add(box, el("span", "none", "none"));
  return box;
}
function tile(text) {   // "purple:2", "green:x3"
  if (!text) return el("span", "tile empty", "–");
  const [colour, value] = String(text).split(":");
  const node = el("span", "tile c-" + safeClass(colour), value);
  node.title = text;
  return node;
}
function tiles(list) {
  const box = el("span", "cards");
  for (const text of list || []) add(box, tile(text));
  if (!list || !list.length) add(box, el("span", "none", "none"));
  return box;
}
function seatName(seat) {
  return "seat " + seat + " (" + data.names[seat] + ")";
}
function view(frame, seat) {   // what `seat` observes at this frame
  return Object.assign({}, frame.pub, frame.own[seat], {seat});
}

// -- each game's table and seat panels ---------------------------------------------------------
const games = {
  "mandala": {
    table(frame, obs) {
      const box = el("div", "areas");
      obs.mandalas.forEach((mandala, index) => {
        const area = add(el("div", "area" + (obs.destroying === index ? " hot" : "")),
                         el("h3", "", "mandala " + index
                            + (obs.destroying === index ? " (being destroyed)" : "")),
                         row("mountain", cards(mandala.mountain)));
        mandala.fields.forEach((field, seat) => add(area, row("field " + seat, cards(field.cards))));
        add(box, area);
      });
      add(box, add(el("div", "area"), el("h3", "", "deck and discard"),
                   row("deck", el("span", "", obs.deck_size + " cards")),
                   row("discard", cards(obs.discard)),
                   row("phase", el("span", "", obs.phase + (obs.end ? ", ended: " + obs.end : "")))));
      return box;
    },
    seat(frame, obs, seat) {
      const player = obs.players[seat];
      const river = el("span", "cards river");
      for (let slot = 0; slot < 6; slot++) {
        add(river, player.river[slot] ? card(player.river[slot], slot + 1)
                                      : el("span", "card slot", slot + 1));
      }
      return [row("hand", cards(obs.hand, "hand")), row("river", river),
              row("cup", el("span", "", player.cup_size + " cards, taken:"),
                  cards(player.cup_taken))];
    },
  },
  "flowers-mandala": {
    table(frame, obs) {
      const box = el("div", "areas");
      for (const mandala of obs.mandalas) {
        const hot = obs.destroying === mandala.number;
        const area = add(el("div", "area" + (hot ? " hot" : "")),
                         el("h3", "", "mandala " + mandala.number + (hot ? " (being destroyed)" : "")),
                         row("tiles", tile(mandala.dark_tile), tile(mandala.light_tile)),
                         row("claim", el("span", "", mandala.claim < 0 ? "nobody" : seatName(mandala.claim))),
                         row("present", add(el("span", "cards"), ...mandala.present.map(
                           (colour) => card(colour, "", "dot")))));
        mandala.sides.forEach((side, seat) => add(area, row(
          "seat " + seat, side.face_up.length || !side.face_down.length ? cards(side.face_up) : null,
          side.face_down.length ? cards(side.face_down, "down") : null)));
        add(box, area);
      }
      add(box, add(el("div", "area"), el("h3", "", "stacks, deck and discard"),
                   row("stacks", el("span", "", "dark " + obs.dark_stack_size + ", light "
                                    + obs.light_stack_size)),
                   row("deck", el("span", "", obs.deck_size + " cards")),
                   row("discard", cards(obs.discard)),
                   row("left game", tiles(obs.left_game)),
                   row("decision", el("span", "", obs.decision))));
      return box;
    },
    seat(frame, obs, seat) {
      const tableau = obs.tableaus[seat];
      const flowers = el("span", "cards");
      for (const flower of tableau.flowers) add(flowers, add(el("span", "flower"), ...flower.tiles.map(tile)));
      if (!tableau.flowers.length) add(flowers, el("span", "none", "none"));
      return [row("hand", cards(obs.hand, "hand")),
              row("known", cards(obs.known_hands[seat].cards)),
              row("tiles", tiles(tableau.singles)), row("flowers", flowers),
              row("points", el("span", "", tableau.points))];
    },
  },
  "flowers": {
    table(frame, obs) {
      const piles = add(el("div", "area"), el("h3", "", "piles"));
      obs.pile_tops.forEach((top, pile) => add(piles, row(
        "pile " + pile, top ? flowerCard(top) : el("span", "card back", pile === 2 ? "?" : ""),
        el("span", "", obs.pile_sizes[pile] + " left"))));
      add(piles, row("turns", el("span", "", obs.turns)));
      return add(el("div", "areas"), piles);
    },
    seat(frame, obs, seat) {
      const parts = [];
      if (obs.to_move === seat && obs.phase === "place") {
        parts.push(row("drawn", obs.drawn_card ? flowerCard(obs.drawn_card, "hand")
                                               : el("span", "card back hand", "?"),
                       el("span", "", "from pile " + obs.drawn_from)));
      }
      parts.push(garden(obs.gardens[seat]));
      return parts;
    },
  },
};

function flowerCard(text, extra) {   // "b3", "y4+g": colour initial, value, + butterfly
  const [main, butterfly] = String(text).split("+");
  const node = card(main[0], main.slice(1), extra);
  node.title = text;
  if (butterfly) add(node, el("span", "fly c-" + safeClass(butterfly), ""));
  return node;
}
function garden(garden) {
  const xs = garden.cells.map((cell) => cell.x), ys = garden.cells.map((cell) => cell.y);
  const left = Math.min(...xs), top = Math.max(...ys);
  const grid = el("div", "garden");
  grid.style.gridTemplateColumns = "repeat(" + (Math.max(...xs) - left + 1) + ", 2.1em)";
  for (const cell of garden.cells) {   // rows from the highest y down, as the engine draws
    const node = flowerCard(cell.cards[cell.cards.length - 1], "cell");
    node.style.gridColumn = String(cell.x - left + 1);
    node.style.gridRow = String(top - cell.y + 1);
    node.title = cell.x + " " + cell.y + ": " + cell.cards.join(" ");
    if (cell.cards.length > 1) add(node, el("span", "stack", cell.cards.length));
    add(grid, node);
  }
  return grid;
}

// -- one frame ---------------------------------------------------------------------------------
let at = 0;
function logLines(frame, ply) {
  const box = el("div", "");
  const seats = Object.keys(data.logs).map(Number).sort((a, b) => a - b);
  for (const seat of seats) {
    const keys = ply === 0 ? ["-1", "0"] : [String(ply)];
    for (const key of keys) {
      const lines = data.logs[String(seat)][key];
      if (!lines || !lines.length) continue;
      add(box, el("h3", "", "log of " + seatName(seat)
                  + (key === "-1" ? " before its first act" : " at ply " + key)),
          el("pre", "log", lines.join("\n")));
    }
  }
  return box;
}
function describe(frame, ply) {
  if (frame.seat === undefined) return "ply " + ply + ": the end of the match";
  if (frame.seat === "chance") return "ply " + ply + ": chance: " + frame.move;
  if (frame.move === undefined) return "ply " + ply + ": " + seatName(frame.seat) + " to decide";
  const took = frame.ms === undefined ? "" : " in " + frame.ms + " ms"
               + (frame.cpu_ms === undefined ? "" : " (CPU " + frame.cpu_ms + " ms)");
  return "ply " + ply + ": " + seatName(frame.seat) + " played " + frame.move + took;
}
function clockText(frame, seat) {
  const used = frame.clock[seat];
  let text = "used " + used.toFixed(3) + " s";
  if (data.bank !== null && data.bank !== undefined) {
    const moved = frames.slice(0, frames.indexOf(frame)).filter((f) => f.seat === seat && f.move !== undefined).length;
    text += ", bank " + (data.bank + data.increment * moved - used).toFixed(3) + " s";
  }
  return text;
}
function show(index, fromHash) {
  at = Math.max(0, Math.min(frames.length - 1, index));
  const frame = frames[at], game = games[data.game];
  document.getElementById("slider").value = String(at);
  document.getElementById("counter").textContent = "of " + (frames.length - 1);
  const link = document.getElementById("ply-link");
  link.href = "#ply-" + at;
  link.textContent = "ply " + at;
  if (!fromHash) {
    try { history.replaceState(null, "", "#ply-" + at); } catch (error) { /* sandboxed */ }
  }
  document.getElementById("what").textContent = describe(frame, at);
  const forfeit = document.getElementById("forfeit");
  const forfeited = data.forfeit && at === data.forfeit.ply;
  forfeit.hidden = !forfeited;
  forfeit.textContent = forfeited ? "Forfeit at ply " + at + ": " + seatName(data.forfeit.seat)
    + " (" + data.forfeit.reason + ")" + (data.forfeit.detail ? ": " + data.forfeit.detail : "") : "";
  const legal = document.getElementById("legal");
  legal.replaceChildren(...(frame.legal || []).map((move) => {
    const item = el("li", move === frame.move ? "move played" : "move", move);
    if (move === frame.move) item.setAttribute("aria-current", "true");
    return item;
  }));
  legal.hidden = !frame.legal;
  document.getElementById("logs").replaceChildren(logLines(frame, at));
  const table = document.getElementById("table");
  table.replaceChildren(el("h2", "", "Table"), game.table(frame, view(frame, 0)));
  const seats = document.getElementById("seats");
  seats.replaceChildren(...data.names.map((name, seat) => {
    const panel = el("section", "seat" + (frame.seat === seat ? " to-move" : ""));
    panel.id = "seat-" + seat;
    add(panel, el("h3", "", seatName(seat)), el("p", "clock", clockText(frame, seat)),
        ...game.seat(frame, view(frame, seat), seat));
    return panel;
  }));
  const final = document.getElementById("final");
  final.hidden = !(at === frames.length - 1 && data.final);
  final.textContent = final.hidden ? "" : data.final;
}
function fromHash() {
  const found = /^#ply-(\d+)$/.exec(location.hash);
  return found ? Number(found[1]) : null;
}

document.getElementById("slider").max = String(frames.length - 1);
document.getElementById("slider").oninput = (event) => show(Number(event.target.value));
document.getElementById("first").onclick = () => show(0);
document.getElementById("prev").onclick = () => show(at - 1);
document.getElementById("next").onclick = () => show(at + 1);
document.getElementById("last").onclick = () => show(frames.length - 1);
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
  const to = {ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: frames.length - 1}[event.key];
  if (to !== undefined) { show(to); event.preventDefault(); }
});
window.addEventListener("hashchange", () => { const ply = fromHash(); if (ply !== null) show(ply, true); });
show(fromHash() ?? 0, true);
