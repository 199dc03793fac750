// Injected after the explorer page's own script by check_explorer_page.cmake: are the words the
// teaching steps name inside the viewport at the step the URL opens? The URL's query (not its
// fragment, which the page rewrites) lists them, ?see=h:17,t:210,c:29, in the left panel:
//   h:P  the "Held now" entry of the word that starts at position P ("Noufem (17)")
//   t:P  the token at position P in the text box (inside the box's visible part, too)
//   c:P  the count line, which must name "(position P)" as evicted now
//   r:P  the count line, which must name "(position P)" as the oldest recent word
// and A|B passes when either does (a word the text box shows on a large screen and only the count
// line on a zoomed one).
// Writes one line per word into a pre element of id viewportCheck, appended to the body: "ok ..."
// or "FAIL ...", with the word's box and the viewport's size.
(function () {
  "use strict";
  var out = [], W = window.innerWidth, H = window.innerHeight;
  var panel = document.getElementById("panelA");
  var see = decodeURIComponent((location.search.match(/[?&]see=([^&]*)/) || [, ""])[1])
    .split(",");
  function inside(r, box) {
    return r.width > 0 && r.height > 0 && r.top >= box.top && r.bottom <= box.bottom &&
      r.left >= box.left && r.right <= box.right;
  }
  var viewport = { top: 0, left: 0, bottom: H, right: W };
  function check(item) {
    var kind = item.charAt(0), p = item.slice(2), el = null, what = "", box = viewport;
    if (kind === "h") {
      panel.querySelectorAll(".holds b").forEach(function (b) {
        if (b.textContent.slice(-(p.length + 3)) === " (" + p + ")") el = b;
      });
      what = "held-now entry of position " + p;
    } else if (kind === "t") {
      el = panel.querySelector('.text [data-p="' + p + '"]');
      what = "token at position " + p + " in the text";
      if (el) {
        var b = el.closest(".text").getBoundingClientRect();
        box = { top: Math.max(0, b.top), left: Math.max(0, b.left), bottom: Math.min(H, b.bottom),
                right: Math.min(W, b.right) };
      }
    } else if (kind === "c" || kind === "r") {
      var said = (kind === "c" ? "evicted now: " : "oldest recent: ");
      el = panel.querySelector(".counts");
      what = "count line naming position " + p + " after \u201c" + said + "\u201d";
      var text = el ? el.textContent : "", at = text.indexOf(said);
      if (at < 0 || text.slice(at).split(";")[0].indexOf("(position " + p + ")") < 0) el = null;
    }
    if (!el) return { ok: false, line: "FAIL " + item + ": no " + what };
    var r = el.getBoundingClientRect(), ok = inside(r, box);
    return { ok: ok, line: (ok ? "ok " : "FAIL ") + item + ": " + what + " \u201c" +
      el.textContent.trim().slice(0, 60) + "\u201d at top " + Math.round(r.top) + ", bottom " +
      Math.round(r.bottom) + ", left " + Math.round(r.left) + ", right " + Math.round(r.right) +
      " (viewport " + W + "x" + H + (box === viewport ? "" : ", visible text box " +
      Math.round(box.top) + " to " + Math.round(box.bottom)) + ")" };
  }
  see.forEach(function (alternatives) {
    if (!alternatives) return;
    var results = alternatives.split("|").map(check);
    var passed = results.filter(function (r) { return r.ok; });
    if (passed.length) out.push(passed[0].line);
    else results.forEach(function (r) { out.push(r.line); });
  });
  var pre = document.createElement("pre");
  pre.id = "viewportCheck";
  pre.textContent = "\n" + out.join("\n") + "\n";
  document.body.appendChild(pre);
})();
