// The explorer page's script (explorer_page.cpp puts it into the page's last script element). It
// only shows what the C++ run computed, read from the JSON in the script element id="data":
//   texts[p]       what token p shows (its share of its word's text; "" for the later byte
//                  tokens of one character), word_starts[p] "1" where a word begins;
//   policies[i]    name, description, kept_label, recent, agreement, KV bytes after each step
//                  (kv_bytes, over full_kv_bytes_per_token of the float32 full cache), and per
//                  layer and KV head the evictions, attention and score levels of every step
//                  (explorer_page.hpp);
//   readings       [first, second, passage]: a passage read twice, its readings' first positions
//                  and its tokens (passage 0: none), marked in the text.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var N = D.texts.length, S = D.steps, DIGITS =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  var TOP = DIGITS.length - 1, COLORS = ["#b35806", "#2166ac"];
  var view = { step: 0, layer: 0, head: 0, a: 0, b: D.policies.length > 1 ? 1 : -1 };
  var $ = function (id) { return document.getElementById(id); };
  var level = function (ch) { return DIGITS.indexOf(ch) / TOP; };
  var esc = function (text) {  // for text written into the chart's SVG markup
    return String(text).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
  };
  // Which reading of the passage read twice token p is in ("first", "second" or ""), and its
  // piece number there (1 on).
  var R = D.readings, readingOf = function (p) {
    if (R[2] > 0 && p >= R[0] && p < R[0] + R[2]) return ["first", p - R[0] + 1];
    if (R[2] > 0 && p >= R[1] && p < R[1] + R[2]) return ["second", p - R[1] + 1];
    return ["", 0];
  };
  var byName = function (name) {
    for (var i = 0; i < D.policies.length; ++i) if (D.policies[i].name === name) return i;
    return -1;
  };

  // Controls. The passage read twice gets its line in the legend, with where its readings are.
  if (R[2] > 0) {
    $("readingsLegend").hidden = false;
    $("readingsWhere").textContent = "positions " + R[0] + "\u2013" + (R[0] + R[2] - 1) +
      " and " + R[1] + "\u2013" + (R[1] + R[2] - 1);
  }
  $("step").max = S - 1;
  for (var l = 0; l < D.layers; ++l) $("layer").add(new Option(String(l), String(l)));
  for (var g = 0; g < D.kv_heads; ++g) $("head").add(new Option(String(g), String(g)));
  var panels = [];
  ["A", "B"].forEach(function (k, i) {
    var section = $("panel" + k);
    if (i === 1 && D.policies.length < 2) { section.remove(); return; }
    var select = $("policy" + k);
    D.policies.forEach(function (p, j) { select.add(new Option(p.name, String(j))); });
    section.querySelector(".swatch").style.background = COLORS[i];
    var text = $("text" + k), spans = [], word = null;
    D.texts.forEach(function (piece, p) {
      // A word's pieces go side by side into one <span class="word">; the spaces and newlines
      // that lead a word stay outside it, as plain text.
      var lead = D.word_starts.charAt(p) === "1" ? piece.match(/^[ \n]*/)[0] : "";
      var rest = piece.slice(lead.length);
      if (lead) text.appendChild(document.createTextNode(lead));
      if (D.word_starts.charAt(p) === "1") {
        word = document.createElement("span");
        word.className = "word";
        text.appendChild(word);
      }
      var span = document.createElement("span");
      span.className = "w unread";
      span.setAttribute("data-p", String(p));
      span.setAttribute("data-state", "unread");
      if (readingOf(p)[0]) span.setAttribute("data-reading", readingOf(p)[0]);
      // A token of only spaces or a newline shows a mark; the later byte tokens of a character
      // show nothing (the page draws them as narrow boxes, class "part").
      if (rest !== "") span.textContent = rest;
      else if (lead !== "") span.textContent = lead.indexOf("\n") >= 0 ? "\u21b5" : "\u00b7";
      span.addEventListener("click", function () { view.step = Math.min(p, S - 1); show(); });
      word.appendChild(span);
      spans.push(span);
    });
    select.addEventListener("change", function () { view[i ? "b" : "a"] = +select.value; show(); });
    panels.push({ key: i ? "b" : "a", section: section, select: select, spans: spans,
                  desc: section.querySelector(".desc"), counts: section.querySelector(".counts"),
                  holds: section.querySelector(".holds"), shownStep: -1 });
  });

  // The text of the word token p belongs to, for a token that is only a piece of it ("" else).
  var wordOf = [];
  for (var p0 = 0; p0 < N; ) {
    var p1 = p0 + 1, whole = D.texts[p0];
    while (p1 < N && D.word_starts.charAt(p1) !== "1") whole += D.texts[p1++];
    for (var q = p0; q < p1; ++q) wordOf.push(p1 - p0 > 1 ? whole.trim() : "");
    p0 = p1;
  }

  // Token p's text in quotes; a later byte token of a character names the character it ends.
  function quote(p) {
    if (D.texts[p] !== "") return "\u201c" + D.texts[p].replace(/\n/g, "\u21b5") + "\u201d";
    var q = p;
    while (q > 0 && D.texts[q] === "") --q;
    return "a later byte of \u201c" + D.texts[q].trim() + "\u201d";
  }

  // Colours every word of one panel for the current step, layer and KV head.
  function paint(panel) {
    var P = D.policies[view[panel.key]], H = P.layers[view.layer][view.head];
    var t = view.step, ev = H.evicted, att = H.att[t], score = H.score[t] || "";
    var ai = 0, si = 0, counts = { heavy: 0, recent: 0, evicted: 0 }, gone = [], held = [];
    var before = "";  // the state of the token before p
    panel.select.value = String(view[panel.key]);
    panel.desc.textContent = P.description;
    for (var p = 0; p < N; ++p) {
      var span = panel.spans[p], state, a = 0, s = 0, tip, cls = "";
      if (p > t) {
        state = "unread";
        tip = "not yet read (read at step " + p + ")";
      } else if (ev[p] >= 0 && ev[p] < t) {
        state = "evicted";
        tip = "evicted at step " + ev[p];
      } else {
        a = level(att.charAt(ai++));
        if (ev[p] === t) {
          state = "evicted";
          cls = " now";
          tip = "evicted now, at step " + t;
          gone.push(p);
        } else {
          s = level(score.charAt(si++));
          state = p > t - P.recent ? "recent" : "heavy";
          tip = state === "recent" ? "kept: recent" : "kept: " + P.kept_label;
          if (P.has_scores) tip += "; score \u2248 " + (s * H.score_max[t]).toPrecision(3);
        }
        tip += "; attention at this step \u2248 " + (a * H.att_max[t]).toPrecision(3);
      }
      if (state !== "unread") counts[state === "evicted" ? "evicted" : state]++;
      if (state === "heavy") held.push(p);
      span.className = "w " + state + cls + (p === t ? " current" : "") +
        (D.texts[p] === "" ? " part" + (state + cls === before ? " same" : "") : "");
      before = state + cls;
      span.setAttribute("data-state", state);
      span.style.setProperty("--s", P.has_scores ? s.toFixed(3) : "0.6");
      span.style.setProperty("--a", a.toFixed(3));
      var reading = readingOf(p);
      span.title = "position " + p + " " + quote(p) +
        (wordOf[p] ? " in \u201c" + wordOf[p] + "\u201d" : "") +
        (reading[0] ? " (" + reading[0] + " reading, piece " + reading[1] + " of " + R[2] + ")" :
         "") + ": " + tip;
    }
    // What it holds now besides the recent window, whole words with their first positions, above
    // the text, where scrolling cannot hide them.
    var words = [];
    held.forEach(function (p) {
      var start = p;
      while (start > 0 && D.word_starts.charAt(start) !== "1") --start;
      var entry = (wordOf[p] || D.texts[p].trim() || quote(p)) + " (" + start + ")";
      if (words.indexOf(entry) < 0) words.push(entry);
    });
    panel.holds.textContent = "";
    if (P.kept_label) {
      panel.holds.append("Held now, " + P.kept_label + " (" + words.length +
                         (words.length === 1 ? " word): " : " words): "));
      words.forEach(function (entry, k) {
        var b = document.createElement("b");
        b.textContent = entry;
        panel.holds.append(k ? " " : "", b);
      });
      if (!words.length) panel.holds.append("none yet");
    }
    var kept = counts.heavy + counts.recent;
    panel.counts.textContent = "step " + t + ": " + kept + " kept (" + (P.kept_label ?
      P.kept_label + ": " + counts.heavy + ", recent: " + counts.recent : "all of them recent") +
      "), " + counts.evicted + " evicted" +
      (gone.length ? "; evicted now: " + gone.map(function (p) {
        return quote(p) + " (position " + p + ")"; }).join(", ") : "") +
      // The oldest word of the recent window: the next to go for a window, the easy guess for H2O.
      (t >= P.recent && P.recent > 0 ? "; oldest recent: " + quote(t - P.recent + 1) +
        " (position " + (t - P.recent + 1) + ")" : "") +
      "; agreement with the full cache so far " + P.agreement_so_far[t] + "%; " +
      P.kv_bytes[t] + " KV bytes, all layers (" +
      (100 * P.kv_bytes[t] / ((t + 1) * D.full_kv_bytes_per_token)).toFixed(1) +
      "% of the fp32 full cache's)";
    // Keep the word being read in sight, low in the box, so that most of what is above shows
    // (measured last, once the lines above the box hold this step's words);
    // only when the step moved: a change of layer, head or policy keeps the reader's place. "In
    // sight" is the part of the box inside the window (on a small or zoomed screen the box runs
    // below its bottom edge); z converts the window's pixels to the box's (a CSS zoom).
    var here = panel.spans[t], box = here.closest(".text");
    var rect = box.getBoundingClientRect();
    var z = rect.height / box.offsetHeight || 1;
    var seen = Math.max(60, Math.min(box.clientHeight, (window.innerHeight - rect.top) / z));
    if (panel.shownStep !== t && (here.offsetTop < box.scrollTop ||
                                  here.offsetTop > box.scrollTop + seen - 30)) {
      box.scrollTop = Math.max(0, here.offsetTop - seen * 0.8);
    }
    panel.shownStep = t;
  }

  // The agreement chart: every policy's agreement so far, one line each, and the current step.
  // The y axis starts at the lowest tens of percent any shown line reaches.
  var chart = $("agreement"), W = 1000, HGT = 170, X0 = 40, Y0 = 34, Y1 = 124;
  var xOf = function (t) { return X0 + (W - X0 - 10) * (S > 1 ? t / (S - 1) : 0); };
  var low = 0;
  var yOf = function (pct) { return Y1 - (Y1 - Y0) * (pct - low) / (100 - low); };
  function drawChart() {
    low = 100;
    panels.forEach(function (panel) {
      D.policies[view[panel.key]].agreement_so_far.forEach(function (pct) {
        low = Math.min(low, Math.floor(+pct / 10) * 10);
      });
    });
    low = Math.min(low, 90);
    var svg = "";
    [low, (low + 100) / 2, 100].forEach(function (pct) {
      svg += '<line x1="' + X0 + '" x2="' + (W - 10) + '" y1="' + yOf(pct) + '" y2="' + yOf(pct) +
        '" stroke="#e5e5ea"/><text x="' + (X0 - 6) + '" y="' + (yOf(pct) + 4) +
        '" text-anchor="end">' + pct + '%</text>';
    });
    panels.forEach(function (panel, i) {
      var P = D.policies[view[panel.key]], pts = [], row = Y1 + 6 + 8 * i;
      for (var t = 0; t < S; ++t) {
        pts.push(xOf(t).toFixed(1) + "," + yOf(+P.agreement_so_far[t]).toFixed(1));
      }
      svg += '<polyline fill="none" stroke-width="2" stroke="' + COLORS[i] + '" points="' +
        pts.join(" ") + '"/>';
      for (var u = 0; u < S; ++u) {
        if (P.agrees.charAt(u) === "0") {
          svg += '<line x1="' + xOf(u).toFixed(1) + '" x2="' + xOf(u).toFixed(1) + '" y1="' + row +
            '" y2="' + (row + 6) + '" stroke="' + COLORS[i] + '"/>';
        }
      }
      svg += '<text x="' + (W - 10) + '" y="' + (11 + 13 * i) + '" text-anchor="end" style="fill:' +
        COLORS[i] + '">' + esc(P.name) + ": " + P.agreement_so_far[S - 1] + "% at the end</text>";
    });
    // The current step's label, kept inside the chart; "step 0" and the last step's label only
    // where it leaves them room (11px text: about 6.2 units a character).
    var x = xOf(view.step), label = "step " + view.step + " (" + panels.map(function (panel) {
      return D.policies[view[panel.key]].agreement_so_far[view.step] + "%"; }).join(" / ") + ")";
    var half = label.length * 3.1, first = "step 0", last = "step " + (S - 1);
    var cx = Math.max(X0 + half, Math.min(W - 10 - half, x));
    if (cx - half > X0 + first.length * 6.2 + 12) {
      svg += '<text x="' + X0 + '" y="' + (Y1 + 36) + '">' + first + '</text>';
    }
    if (cx + half < W - 10 - last.length * 6.2 - 12) {
      svg += '<text x="' + (W - 10) + '" y="' + (Y1 + 36) + '" text-anchor="end">' + last +
        '</text>';
    }
    svg += '<line x1="' + x.toFixed(1) + '" x2="' + x.toFixed(1) + '" y1="' + (Y0 - 6) + '" y2="' +
      (Y1 + 22) + '" stroke="#1d1d1f" stroke-dasharray="3 2"/><text x="' + cx.toFixed(1) +
      '" y="' + (Y1 + 36) + '" text-anchor="middle" style="fill:#1d1d1f">' + esc(label) +
      "</text>";
    chart.innerHTML = svg;
  }
  chart.setAttribute("viewBox", "0 0 " + W + " " + (HGT + 6));
  chart.setAttribute("preserveAspectRatio", "none");
  chart.addEventListener("click", function (e) {
    var box = chart.getBoundingClientRect(), x = (e.clientX - box.left) / box.width * W;
    view.step = Math.max(0, Math.min(S - 1, Math.round((x - X0) / (W - X0 - 10) * (S - 1))));
    show();
  });

  function show() {
    view.step = Math.max(0, Math.min(S - 1, view.step | 0));
    $("step").value = String(view.step);
    $("layer").value = String(view.layer);
    $("head").value = String(view.head);
    $("stepText").textContent = "step " + view.step + " of " + (S - 1);
    $("reading").innerHTML = "";
    $("reading").append("Step " + view.step + ": the model reads ");
    var b = document.createElement("b");
    b.textContent = quote(view.step);
    $("reading").append(b, " (position " + view.step + (wordOf[view.step] ? ", a piece of \u201c" +
      wordOf[view.step] + "\u201d" : "") + ") and predicts position " + (view.step + 1) +
      ". Layer " + view.layer + ", KV head " + view.head + ".");
    panels.forEach(paint);
    // The legend names what each shown policy keeps besides its recent window.
    $("keptLabel").textContent = panels.map(function (panel) {
      var P = D.policies[view[panel.key]];
      return P.name + ": " + (P.kept_label || "none");
    }).join("; ");
    drawChart();
    var hash = "#step=" + view.step + "&layer=" + view.layer + "&head=" + view.head + "&policy=" +
      D.policies[view.a].name + (view.b >= 0 ? "&compare=" + D.policies[view.b].name : "");
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // #step=120&layer=0&head=0&policy=h2o&compare=window: what to show (invalid parts are ignored).
  function readHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("="), key = kv[0], value = decodeURIComponent(kv[1] || "");
      var n = /^\d+$/.test(value) ? parseInt(value, 10) : -1;
      if (key === "step" && n >= 0) view.step = n;
      if (key === "layer" && n >= 0 && n < D.layers) view.layer = n;
      if (key === "head" && n >= 0 && n < D.kv_heads) view.head = n;
      if (key === "policy" && byName(value) >= 0) {
        view.a = byName(value);
        if (view.b === view.a) view.b = D.policies.length > 1 ? 1 - view.a : -1;
      }
      if (key === "compare" && byName(value) >= 0 && view.b >= 0) view.b = byName(value);
    });
  }

  var timer = null;
  function play(on) {
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      if (view.step >= S - 1) view.step = 0;
      timer = setInterval(function () {
        if (view.step >= S - 1) { play(false); return; }
        view.step++;
        show();
      }, 160);
    }
    $("play").textContent = timer ? "\u275a\u275a pause" : "\u25b6 play";
  }
  $("prev").addEventListener("click", function () { play(false); view.step--; show(); });
  $("next").addEventListener("click", function () { play(false); view.step++; show(); });
  $("play").addEventListener("click", function () { play(!timer); });
  $("step").addEventListener("input", function () { view.step = +$("step").value; show(); });
  $("layer").addEventListener("change", function () { view.layer = +$("layer").value; show(); });
  $("head").addEventListener("change", function () { view.head = +$("head").value; show(); });
  document.addEventListener("keydown", function (e) {
    if (e.target.tagName === "SELECT") return;
    var moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    if (e.key in moves) { play(false); view.step += moves[e.key]; }
    else if (e.key === "Home") view.step = 0;
    else if (e.key === "End") view.step = S - 1;
    else return;
    e.preventDefault();
    show();
  });
  // The verdict's numbers and reason show at once where the header is wide (a laptop's screen at
  // 100%); on a narrow or zoomed one its summary line stays and they are one click away.
  var wide = document.querySelector("header").clientWidth >= 1200;
  if ($("verdict") && wide) $("verdict").open = true;
  window.addEventListener("hashchange", function () { readHash(); show(); });
  readHash();
  show();
})();
