#include "h2o/report/explorer_page.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace h2o {

// ------------------------------------------------------------------------------------------------
// Escaping

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1..4), or 0 when it is not valid
// (overlong forms, surrogates and code points above U+10FFFF are not).
std::size_t utf8_sequence(const std::string& s, std::size_t i, unsigned* code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned b0 = byte(i);
  std::size_t n = 0;
  unsigned cp = 0, min = 0;
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

// The 64 characters a shade level is written with: one character per level, JSON- and HTML-safe.
constexpr char kLevelDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static_assert(sizeof(kLevelDigits) - 1 == kShadeLevels, "one digit per shade level");

std::string levels_text(const std::vector<std::uint8_t>& levels) {
  std::string out = "\"";
  for (std::uint8_t level : levels) out += kLevelDigits[level];
  return out + "\"";
}

// A number for JSON with 4 significant digits (non-finite numbers, which JSON cannot hold, as 0).
std::string json_number(double value) {
  if (!std::isfinite(value)) return "0";
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

}  // namespace

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    unsigned cp = 0;
    const std::size_t n = utf8_sequence(text, i, &cp);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    char escape[16];
    if (cp == '"') {
      out += "\\\"";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 || cp == 0x2029) {
      std::snprintf(escape, sizeof(escape), "\\u%04x", cp);
      out += escape;
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
  return out + "\"";
}

bool is_valid_utf8(const std::string& text) {
  unsigned cp = 0;
  for (std::size_t i = 0, n = 0; i < text.size(); i += n) {
    n = utf8_sequence(text, i, &cp);
    if (n == 0) return false;
  }
  return true;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Writing the file

// ------------------------------------------------------------------------------------------------
// The page

namespace {

// The style sheet and the script: fixed text, the same for every page (the data differ).
const char* const kStyle = R"CSS(
:root { --heavy: #e69f00; --recent: #56b4e9; --gone: #d55e00; --ink: #1d1d1f; --muted: #6e6e73;
        --line: #d8d8dc; --panel: #fbfbfd; --bar: #0b3c8c; }
* { box-sizing: border-box; }
body { margin: 0; padding: 16px 24px 32px; font: 15px/1.45 system-ui, -apple-system, "Segoe UI",
       Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 22px; margin: 0 0 2px; }
header p { margin: 0; color: var(--muted); font-size: 13px; }
#controls { position: sticky; top: 0; z-index: 2; background: #fff; display: flex; flex-wrap: wrap;
            gap: 8px 14px; align-items: center; padding: 10px 0 8px; border-bottom: 1px solid var(--line); }
#controls button { font: inherit; padding: 4px 12px; border: 1px solid #b8b8bd; border-radius: 6px;
                   background: #f5f5f7; cursor: pointer; }
#controls button:hover { background: #e8e8ed; }
#controls select { font: inherit; padding: 2px 4px; }
#step { flex: 1 1 260px; min-width: 200px; }
#stepText { font-variant-numeric: tabular-nums; min-width: 9em; display: inline-block; font-weight: 600; }
#reading { margin: 8px 0 4px; }
#reading b { background: #fff3bf; padding: 0 3px; border-radius: 3px; }
#legend { display: flex; flex-wrap: wrap; gap: 6px 18px; font-size: 13px; color: var(--muted); margin: 4px 0 10px; }
#legend .w { color: var(--ink); }
#panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 16px; }
.panel { border: 1px solid var(--line); border-radius: 10px; background: var(--panel); padding: 10px 14px 14px; }
.panel h2 { font-size: 17px; margin: 0; display: flex; gap: 8px; align-items: center; }
.panel h2 select { font: inherit; font-weight: 600; }
.panel .swatch { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
.desc { color: var(--muted); font-size: 13px; margin: 2px 0 4px; }
.counts { font-size: 13px; margin: 0 0 8px; font-variant-numeric: tabular-nums; }
.text { position: relative; white-space: pre-wrap; font-size: 14px; line-height: 2.05; max-height: 50vh; overflow-y: auto;
        background: #fff; border: 1px solid #ececf0; border-radius: 6px; padding: 6px 10px; }
.w { position: relative; border-radius: 3px; padding: 1px 1px; --s: 1; --a: 0; }
.w::after { content: ""; position: absolute; left: 0; bottom: -3px; height: 3px; border-radius: 1px;
            width: calc(var(--a) * 100%); background: var(--bar); }
.w.unread { color: #b0b0b5; }
.w.heavy { background: rgba(230, 159, 0, calc(0.18 + 0.72 * var(--s))); font-weight: 700; }
.w.recent { background: rgba(86, 180, 233, calc(0.18 + 0.5 * var(--s))); }
.w.evicted { color: #8e8e93; text-decoration: line-through; }
.w.evicted.now { color: var(--gone); outline: 2px solid var(--gone); text-decoration: line-through;
                 font-weight: 700; }
.w.current { outline: 2px solid var(--ink); }
#chart { margin-top: 16px; }
#chart h2 { font-size: 16px; margin: 0 0 4px; }
#chart p { margin: 2px 0; font-size: 13px; color: var(--muted); }
#agreement { width: 100%; height: 170px; display: block; cursor: pointer; }
#agreement text { font: 11px system-ui, sans-serif; fill: var(--muted); }
footer { margin-top: 18px; font-size: 12px; color: var(--muted); }
footer code { background: #f5f5f7; padding: 1px 4px; border-radius: 3px; }
)CSS";

const char* const kScript = R"JS(
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("data").textContent);
  var N = D.words.length, S = D.steps, DIGITS =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  var TOP = DIGITS.length - 1, COLORS = ["#b35806", "#2166ac"];
  var view = { step: 0, layer: 0, head: 0, a: 0, b: D.policies.length > 1 ? 1 : -1 };
  var $ = function (id) { return document.getElementById(id); };
  var level = function (ch) { return DIGITS.indexOf(ch) / TOP; };
  var esc = function (text) {  // for text written into the chart's SVG markup
    return String(text).replace(/[&<>"]/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
  };
  var byName = function (name) {
    for (var i = 0; i < D.policies.length; ++i) if (D.policies[i].name === name) return i;
    return -1;
  };

  // Controls.
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
    var text = $("text" + k), spans = [];
    D.words.forEach(function (word, p) {
      var lead = word.match(/^[ \n]*/)[0], rest = word.slice(lead.length);
      if (lead) text.appendChild(document.createTextNode(lead));
      var span = document.createElement("span");
      span.className = "w unread";
      span.setAttribute("data-p", String(p));
      span.setAttribute("data-state", "unread");
      span.textContent = rest === "" ? (lead.indexOf("\n") >= 0 ? "\u21b5" : "\u00b7") : rest;
      span.addEventListener("click", function () { view.step = Math.min(p, S - 1); show(); });
      text.appendChild(span);
      spans.push(span);
    });
    select.addEventListener("change", function () { view[i ? "b" : "a"] = +select.value; show(); });
    panels.push({ key: i ? "b" : "a", section: section, select: select, spans: spans,
                  desc: section.querySelector(".desc"), counts: section.querySelector(".counts") });
  });

  function quote(p) { return "\u201c" + D.words[p].replace(/\n/g, "\u21b5") + "\u201d"; }

  // Colours every word of one panel for the current step, layer and KV head.
  function paint(panel) {
    var P = D.policies[view[panel.key]], H = P.layers[view.layer][view.head];
    var t = view.step, ev = H.evicted, att = H.att[t], score = H.score[t] || "";
    var ai = 0, si = 0, counts = { heavy: 0, recent: 0, evicted: 0 }, gone = [];
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
      span.className = "w " + state + cls + (p === t ? " current" : "");
      span.setAttribute("data-state", state);
      span.style.setProperty("--s", P.has_scores ? s.toFixed(3) : "0.6");
      span.style.setProperty("--a", a.toFixed(3));
      span.title = "position " + p + " " + quote(p) + ": " + tip;
    }
    // Keep the word being read in sight, low in the box, so that most of what is above shows.
    var here = panel.spans[t], box = here.parentNode;
    if (here.offsetTop < box.scrollTop || here.offsetTop > box.scrollTop + box.clientHeight - 30) {
      box.scrollTop = Math.max(0, here.offsetTop - box.clientHeight * 0.8);
    }
    var kept = counts.heavy + counts.recent;
    panel.counts.textContent = "step " + t + ": " + kept + " kept (" + (P.kept_label ?
      P.kept_label + ": " + counts.heavy + ", recent: " + counts.recent : "all of them recent") +
      "), " + counts.evicted + " evicted" +
      (gone.length ? "; evicted now: " + gone.map(function (p) {
        return quote(p) + " (position " + p + ")"; }).join(", ") : "") +
      "; agreement with the full cache so far " + P.agreement_so_far[t] + "%";
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
      for (var t = 0; t < S; ++t) pts.push(xOf(t).toFixed(1) + "," + yOf(+P.agreement_so_far[t]).toFixed(1));
      svg += '<polyline fill="none" stroke-width="2" stroke="' + COLORS[i] + '" points="' +
        pts.join(" ") + '"/>';
      for (var u = 0; u < S; ++u) {
        if (P.agrees.charAt(u) === "0") {
          svg += '<line x1="' + xOf(u).toFixed(1) + '" x2="' + xOf(u).toFixed(1) + '" y1="' + row +
            '" y2="' + (row + 6) + '" stroke="' + COLORS[i] + '"/>';
        }
      }
      svg += '<text x="' + (W - 10) + '" y="' + (11 + 13 * i) + '" text-anchor="end" fill="' +
        COLORS[i] + '">' + esc(P.name) + ": " + P.agreement_so_far[S - 1] + "% at the end</text>";
    });
    svg += '<text x="' + X0 + '" y="' + (Y1 + 36) + '">step 0</text><text x="' + (W - 10) +
      '" y="' + (Y1 + 36) + '" text-anchor="end">step ' + (S - 1) + '</text>';
    var x = xOf(view.step).toFixed(1);
    svg += '<line x1="' + x + '" x2="' + x + '" y1="' + (Y0 - 6) + '" y2="' + (Y1 + 22) +
      '" stroke="#1d1d1f" stroke-dasharray="3 2"/><text x="' + x + '" y="' + (Y1 + 36) +
      '" text-anchor="middle" style="fill:#1d1d1f">step ' + view.step + " (" +
      panels.map(function (panel) {
        return D.policies[view[panel.key]].agreement_so_far[view.step] + "%"; }).join(" / ") +
      ")</text>";
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
    $("reading").append(b, " (position " + view.step + ") and predicts position " +
      (view.step + 1) + ". Layer " + view.layer + ", KV head " + view.head + ".");
    panels.forEach(paint);
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
  window.addEventListener("hashchange", function () { readHash(); show(); });
  readHash();
  show();
})();
)JS";

void check_page(const ExplorerPage& page) {
  if (page.policies.empty() || page.policies.size() > 2) {
    throw std::invalid_argument("an explorer page shows 1 or 2 policies, not " +
                                std::to_string(page.policies.size()));
  }
  const std::size_t n = page.words.size();
  const CacheTrace* first = page.policies.front().trace;
  for (const ExplorerPolicy& policy : page.policies) {
    const CacheTrace* trace = policy.trace;
    if (trace == nullptr || trace->steps + 1 != n || trace->steps == 0 ||
        trace->layers != first->layers || trace->kv_heads != first->kv_heads ||
        trace->agrees.size() != trace->steps) {
      throw std::invalid_argument("the trace of policy '" + policy.name +
                                  "' does not match the page's text or the other trace");
    }
  }
}

// One KV head's trace; without scores (a policy that keeps none) the score arrays stay empty.
void write_head_json(std::ostream& out, const HeadTrace& head, bool has_scores) {
  out << "{\"evicted\":[";
  for (std::size_t p = 0; p < head.evicted_at.size(); ++p) out << (p ? "," : "") << head.evicted_at[p];
  out << "],\n\"att\":[";
  for (std::size_t t = 0; t < head.attention.size(); ++t) {
    out << (t ? "," : "") << levels_text(head.attention[t]);
  }
  out << "],\n\"att_max\":[";
  for (std::size_t t = 0; t < head.attention_max.size(); ++t) {
    out << (t ? "," : "") << json_number(head.attention_max[t]);
  }
  const std::size_t score_steps = has_scores ? head.score.size() : 0;
  out << "],\n\"score\":[";
  for (std::size_t t = 0; t < score_steps; ++t) out << (t ? "," : "") << levels_text(head.score[t]);
  out << "],\n\"score_max\":[";
  for (std::size_t t = 0; t < score_steps; ++t) {
    out << (t ? "," : "") << json_number(head.score_max[t]);
  }
  out << "]}";
}

void write_policy_json(std::ostream& out, const ExplorerPolicy& policy) {
  const CacheTrace& trace = *policy.trace;
  bool has_scores = false;
  for (const auto& layer : trace.heads) {
    for (const HeadTrace& head : layer) {
      for (float max : head.score_max) has_scores = has_scores || max > 0.0f;
    }
  }
  out << "{\"name\":" << json_string(policy.name)
      << ",\"description\":" << json_string(policy.description)
      << ",\"kept_label\":" << json_string(policy.kept_label) << ",\"recent\":" << policy.recent
      << ",\"has_scores\":" << (has_scores ? "true" : "false") << ",\n\"agrees\":\"";
  for (bool agrees : trace.agrees) out << (agrees ? '1' : '0');
  // Agreement with the full cache over steps 0..t, in percent with one decimal.
  out << "\",\n\"agreement_so_far\":[";
  std::size_t agreed = 0;
  for (std::size_t t = 0; t < trace.agrees.size(); ++t) {
    agreed += trace.agrees[t] ? 1 : 0;
    char text[16];
    std::snprintf(text, sizeof(text), "\"%.1f\"",
                  100.0 * static_cast<double>(agreed) / static_cast<double>(t + 1));
    out << (t ? "," : "") << text;
  }
  out << "],\n\"layers\":[";
  for (std::size_t l = 0; l < trace.layers; ++l) {
    out << (l ? ",\n" : "") << "[";
    for (std::size_t g = 0; g < trace.kv_heads; ++g) {
      out << (g ? ",\n" : "");
      write_head_json(out, trace.heads[l][g], has_scores);
    }
    out << "]";
  }
  out << "]}";
}

}  // namespace

std::string explorer_page_html(const ExplorerPage& page) {
  check_page(page);
  const CacheTrace& first = *page.policies.front().trace;
  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       << "<title>" << html_escape(page.title) << "</title>\n<style>" << kStyle << "</style>\n"
       << "</head>\n<body>\n<header>\n<h1>" << html_escape(page.title) << "</h1>\n";
  for (const std::string& line : page.about) html << "<p>" << html_escape(line) << "</p>\n";
  html << "</header>\n"
       << "<nav id=\"controls\">\n"
       << "<button id=\"prev\" title=\"previous step (left arrow key)\">&#9664; previous</button>\n"
       << "<button id=\"play\" title=\"play / pause\">&#9654; play</button>\n"
       << "<button id=\"next\" title=\"next step (right arrow key)\">next &#9654;</button>\n"
       << "<input type=\"range\" id=\"step\" min=\"0\" value=\"0\" aria-label=\"step\">\n"
       << "<output id=\"stepText\"></output>\n"
       << "<label>layer <select id=\"layer\"></select></label>\n"
       << "<label>KV head <select id=\"head\"></select></label>\n</nav>\n"
       << "<p id=\"reading\"></p>\n"
       << "<div id=\"legend\">"
       << "<span><span class=\"w heavy\">bold, orange</span> kept outside the recent window "
          "(H2O: a heavy hitter); darker = higher score</span>"
       << "<span><span class=\"w recent\">plain, blue</span> kept as recent</span>"
       << "<span><span class=\"w evicted\">struck out</span> evicted earlier</span>"
       << "<span><span class=\"w evicted now\">boxed, red</span> evicted at this step</span>"
       << "<span><span class=\"w unread\">pale</span> not yet read</span>"
       << "<span><span class=\"w recent\" style=\"--a:1\">bar below</span> attention of this "
          "step</span>"
       << "<span>hover a word for its numbers; click it to go to its step</span></div>\n"
       << "<main id=\"panels\">\n";
  for (const char* key : {"A", "B"}) {
    html << "<section class=\"panel\" id=\"panel" << key << "\">\n<h2><span class=\"swatch\">"
         << "</span><select id=\"policy" << key << "\" aria-label=\"policy\"></select></h2>\n"
         << "<p class=\"desc\"></p>\n<p class=\"counts\"></p>\n<div class=\"text\" id=\"text" << key
         << "\"></div>\n</section>\n";
  }
  html << "</main>\n<section id=\"chart\">\n<h2>Agreement with the full cache</h2>\n"
       << "<svg id=\"agreement\" role=\"img\" aria-label=\"agreement with the full cache so far"
       << "\"></svg>\n<p>Each line: the share of steps so far at which the policy's most likely next "
       << "token is the full cache's (teacher forcing). Ticks below the lines: the steps where it "
       << "is not. Click the chart to go to a step.</p>"
       << "\n</section>\n<footer>Written by <code>" << html_escape(page.command)
       << "</code>. Every number on this page was computed by that run; the page only shows them."
       << "</footer>\n";

  html << "<script type=\"application/json\" id=\"data\">\n{\"budget\":" << page.budget
       << ",\"steps\":" << first.steps << ",\"layers\":" << first.layers
       << ",\"kv_heads\":" << first.kv_heads << ",\n\"words\":[";
  for (std::size_t p = 0; p < page.words.size(); ++p) {
    html << (p ? "," : "") << json_string(page.words[p]);
  }
  html << "],\n\"policies\":[";
  for (std::size_t i = 0; i < page.policies.size(); ++i) {
    html << (i ? ",\n" : "");
    write_policy_json(html, page.policies[i]);
  }
  html << "]}\n</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
  return html.str();
}

}  // namespace h2o
