#include "h2o/report/explorer_page.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "h2o/base/format.hpp"
#include "h2o/base/utf8.hpp"
#include "h2o/report/verdict_text.hpp"

// The page's frame, style sheet and script (src/report/explorer/page.html, page.css, page.js),
// which cmake/embed_file.cmake made into C++ sources (src/CMakeLists.txt).
namespace h2o::embedded {
extern const unsigned char explorer_page_html[];
extern const std::size_t explorer_page_html_size;
extern const unsigned char explorer_page_css[];
extern const std::size_t explorer_page_css_size;
extern const unsigned char explorer_page_js[];
extern const std::size_t explorer_page_js_size;
}  // namespace h2o::embedded

namespace h2o {

// ------------------------------------------------------------------------------------------------
// Escaping

namespace {

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
    char32_t cp = 0;
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
      std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(cp));
      out += escape;
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
  return out + "\"";
}

std::string html_escape(const std::string& text) { return escape_markup(text, true); }

// ------------------------------------------------------------------------------------------------
// The page

namespace {

void check_page(const ExplorerPage& page) {
  if (page.policies.empty() || page.policies.size() > 2) {
    throw std::invalid_argument("an explorer page shows 1 or 2 policies, not " +
                                std::to_string(page.policies.size()));
  }
  const std::size_t n = page.texts.size();
  if (page.word_starts.size() != n) {
    throw std::invalid_argument("an explorer page needs a word start for each of its " +
                                std::to_string(n) + " tokens, got " +
                                std::to_string(page.word_starts.size()));
  }
  if (page.full_kv_bytes_per_token == 0) {
    throw std::invalid_argument("an explorer page needs the full cache's KV bytes per token");
  }
  const ExplorerReadings& r = page.readings;
  if (r.passage > 0 && (r.first == 0 || r.first + r.passage > r.second || r.second > n ||
                        r.passage > n - r.second)) {
    throw std::invalid_argument(
        "an explorer page's two readings of " + std::to_string(r.passage) + " tokens at " +
        std::to_string(r.first) + " and " + std::to_string(r.second) +
        " must follow BOS, not overlap, and fit its " + std::to_string(n) + " tokens");
  }
  const CacheTrace* first = page.policies.front().trace;
  for (const ExplorerPolicy& policy : page.policies) {
    const CacheTrace* trace = policy.trace;
    if (trace == nullptr || trace->steps + 1 != n || trace->steps == 0 ||
        trace->layers != first->layers || trace->kv_heads != first->kv_heads ||
        trace->agrees.size() != trace->steps || trace->kv_bytes.size() != trace->steps) {
      throw std::invalid_argument("the trace of policy '" + policy.name +
                                  "' does not match the page's text or the other trace");
    }
  }
}

// One KV head's trace; without scores (a policy that keeps none) the score arrays stay empty.
void write_head_json(std::ostream& out, const HeadTrace& head, bool has_scores) {
  out << "{\"evicted\":[";
  for (std::size_t p = 0; p < head.evicted_at.size(); ++p)
    out << (p ? "," : "") << head.evicted_at[p];
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
  out << "],\n\"kv_bytes\":[";
  for (std::size_t t = 0; t < trace.kv_bytes.size(); ++t)
    out << (t ? "," : "") << trace.kv_bytes[t];
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

namespace {

std::string frame() {
  return std::string(reinterpret_cast<const char*>(embedded::explorer_page_html),
                     embedded::explorer_page_html_size);
}
std::string style() {
  return std::string(reinterpret_cast<const char*>(embedded::explorer_page_css),
                     embedded::explorer_page_css_size);
}
std::string script() {
  return std::string(reinterpret_cast<const char*>(embedded::explorer_page_js),
                     embedded::explorer_page_js_size);
}

// Text of the page's header and footer, in HTML: control characters visible, markup escaped.
std::string html_shown(const std::string& text) { return html_escape(printable(text)); }

// The JSON of the page's data: texts, word starts and the policies.
void write_data_json(std::ostream& out, const ExplorerPage& page) {
  const CacheTrace& first = *page.policies.front().trace;
  out << "{\"budget\":" << page.budget << ",\"steps\":" << first.steps
      << ",\"layers\":" << first.layers << ",\"kv_heads\":" << first.kv_heads
      << ",\"full_kv_bytes_per_token\":" << page.full_kv_bytes_per_token << ",\n\"texts\":[";
  for (std::size_t p = 0; p < page.texts.size(); ++p) {
    out << (p ? "," : "") << json_string(page.texts[p]);
  }
  out << "],\n\"word_starts\":\"";
  for (bool start : page.word_starts) out << (start ? '1' : '0');
  const ExplorerReadings& r = page.readings;
  out << "\",\n\"readings\":[" << r.first << ',' << r.second << ',' << r.passage << ']';
  out << ",\n\"policies\":[";
  for (std::size_t i = 0; i < page.policies.size(); ++i) {
    out << (i ? ",\n" : "");
    write_policy_json(out, page.policies[i]);
  }
  out << "]}";
}

// `frame` with each {{name}} replaced by values.at(name), in one pass: what goes in is never
// searched for names itself. An unknown name is a mistake in page.html (std::logic_error).
std::string fill_frame(const std::string& frame,
                       const std::vector<std::pair<std::string, std::string>>& values) {
  std::string out;
  std::size_t at = 0;
  for (std::size_t open = frame.find("{{"); open != std::string::npos;
       open = frame.find("{{", at)) {
    const std::size_t close = frame.find("}}", open);
    if (close == std::string::npos) break;
    const std::string name = frame.substr(open + 2, close - open - 2);
    const auto value = std::find_if(values.begin(), values.end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (value == values.end()) {
      throw std::logic_error("explorer page.html names {{" + name + "}}, which the page lacks");
    }
    out.append(frame, at, open - at).append(value->second);
    at = close + 2;
  }
  return out.append(frame, at, std::string::npos);
}

// The page's header text as HTML paragraphs, folded under one line beside the title, so that the
// text panels start high on a small screen.
std::string about_html(const ExplorerPage& page) {
  std::string about =
      "<details id=\"about\"><summary>the run: model, text, budget, bytes"
      "</summary>\n";
  for (const std::string& line : page.about) about += "<p>" + html_shown(line) + "</p>\n";
  return about + "</details>\n";
}

std::uint64_t digits(std::uint64_t value) {
  std::uint64_t n = 1;
  for (; value >= 10; value /= 10) ++n;
  return n;
}

}  // namespace

namespace {
std::string possessive(const std::string& name) {  // "h2o's", "sinks'"
  return name + (!name.empty() && name.back() == 's' ? "'" : "'s");
}
}  // namespace

std::string verdict_text(const ExplorerVerdict& verdict) {
  const std::string against =
      verdict.against_at.empty() ? possessive(verdict.against) : verdict.against_at;
  return (verdict.full_names.empty() ? "" : verdict.full_names + "; ") +
         possessive(verdict.subject) + " " +
         verdict_sentence(against, verdict.difference, verdict.units) +
         (verdict.names.empty() ? "" : "; " + verdict.names);
}

std::string verdict_html(const ExplorerPage& page) {
  if (!page.has_verdict) return "";
  const ExplorerVerdict& v = page.verdict;
  const Verdict verdict = verdict_of(v.difference);
  const char* key = verdict == Verdict::Better  ? "better"
                    : verdict == Verdict::Worse ? "worse"
                                                : "within-noise";
  std::string held;
  for (const std::string& line : v.held) held += (held.empty() ? "" : "; ") + line;
  // A <details> element, which the page's script opens on a wide screen: on a small one the
  // summary line stays, the numbers and the reason one click away.
  return "<details id=\"verdict\" data-verdict=\"" + std::string(key) + "\">\n<summary><b>" +
         html_shown(v.subject + " against " + v.against +
               (v.against_at.empty() ? "" : " at equal KV bytes") +
               " on this text: " + verdict_word(verdict)) +
         "</b></summary>\n<p>" + html_shown(verdict_text(v)) + "</p>\n" +
         (v.bytes.empty() ? "" : "<p>" + html_shown(v.bytes) + "</p>\n") +
         (held.empty()
              ? ""
              : "<p>Names held at the end beyond a window's reach: " + html_shown(held) + "</p>\n") +
         (v.reason.empty() ? "" : "<p>Why: " + html_shown(v.reason) + "</p>\n") + "</details>\n";
}

std::vector<std::string> names_held_beyond(const CacheTrace& trace,
                                           const std::vector<NameMention>& mentions,
                                           const NameTokens& names, std::size_t window) {
  const std::size_t n = trace.steps + 1, caches = trace.layers * trace.kv_heads;
  const std::size_t oldest_recent = n > window ? n - window : 0;  // a window's first position
  std::vector<std::size_t> order;                                 // the names held
  std::vector<std::size_t> holding(names.names.size(), 0);        // (K,) caches holding each
  for (std::size_t name = 0; name < names.names.size(); ++name) {
    for (const auto& layer : trace.heads) {
      for (const HeadTrace& head : layer) {
        bool holds = false;
        for (const NameMention& m : mentions) {
          for (std::size_t p = m.first; m.name == name && p <= m.last && p < oldest_recent; ++p)
            holds = holds || head.evicted_at[p] == kNeverEvicted;
        }
        holding[name] += holds ? 1 : 0;
      }
    }
    if (holding[name] > 0) order.push_back(name);
  }
  // In order of each name's first mention.
  auto first_mention = [&](std::size_t name) {
    for (const NameMention& m : mentions) {
      if (m.name == name) return m.first;
    }
    return n;
  };
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return first_mention(a) < first_mention(b); });
  std::vector<std::string> out;
  for (std::size_t name : order) {
    out.push_back(names.names[name] + " (" + std::to_string(holding[name]) + " of " +
                  std::to_string(caches) + " caches)");
  }
  return out;
}

std::string explorer_page_html(const ExplorerPage& page) {
  check_page(page);
  std::ostringstream data;
  write_data_json(data, page);
  return fill_frame(frame(), {{"title", html_shown(page.title)},
                              {"about", about_html(page)},
                              {"verdict", verdict_html(page)},
                              {"style", style()},
                              {"script", script()},
                              {"data", data.str()},
                              {"command", html_shown(page.command)}});
}

std::uint64_t explorer_page_bytes(const ExplorerPage& page, std::size_t layers,
                                  std::size_t kv_heads,
                                  const std::vector<ExplorerTraceShape>& shapes) {
  if (page.texts.size() < 2 || shapes.size() != page.policies.size()) {
    throw std::invalid_argument(
        "explorer_page_bytes needs 2 or more tokens and one shape a policy");
  }
  // Average widths of the numbers the JSON holds, with their comma: %.4g of an attention weight
  // in (0, 1] ("0.1234"), of an accumulated score ("12.34"), a percentage ("95.9" in quotes).
  constexpr std::uint64_t kWeight = 7, kScore = 6, kPercent = 7;
  const std::uint64_t n = page.texts.size(), steps = n - 1;
  // The page without its data: the frame, style, script, header and footer.
  std::uint64_t bytes = fill_frame(frame(), {{"title", ""},
                                             {"about", ""},
                                             {"verdict", ""},
                                             {"style", ""},
                                             {"script", ""},
                                             {"data", ""},
                                             {"command", ""}})
                            .size() +
                        style().size() + script().size() + 2 * html_shown(page.title).size() +
                        about_html(page).size() + verdict_html(page).size() +
                        html_shown(page.command).size();
  bytes += 107 + 2 * n + digits(page.full_kv_bytes_per_token);  // fixed keys, word starts
  const ExplorerReadings& r = page.readings;
  bytes += 17 + digits(r.first) + digits(r.second) + digits(r.passage);  // "readings":[..]
  for (const std::string& text : page.texts) bytes += json_string(text).size() + 1;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const ExplorerPolicy& policy = page.policies[i];
    const std::uint64_t m =
        std::min<std::uint64_t>(std::max<std::size_t>(shapes[i].max_kept, 1), n);
    bytes += json_string(policy.name).size() + json_string(policy.description).size() +
             json_string(policy.kept_label).size() + digits(policy.recent) + 115;
    bytes += steps * (1 + kPercent);  // agrees, agreement_so_far
    // KV bytes after each step: at most the float32 full cache's for the min(t + 1, m) kept.
    for (std::uint64_t t = 0; t < steps; ++t) {
      bytes += 1 + digits(std::min(t + 1, m) * page.full_kv_bytes_per_token);
    }
    // One KV head: the step each position left (steps m..S-1 each evict one; the others say -1),
    // one attention row a step over the positions held before the eviction, min(t + 1, m + 1),
    // and with scores one score row over the kept, min(t + 1, m).
    const std::uint64_t evictions = steps > m ? steps - m : 0;
    std::uint64_t head = 70 + 2 * (n - evictions) + (n - 1) + steps * (3 + kWeight);
    for (std::uint64_t t = m; t < steps; ++t) head += digits(t);
    for (std::uint64_t t = 0; t < steps; ++t) head += std::min(t + 1, m + 1);
    if (shapes[i].has_scores) {
      head += steps * (3 + kScore);
      for (std::uint64_t t = 0; t < steps; ++t) head += std::min(t + 1, m);
    }
    bytes += head * layers * kv_heads;
  }
  return bytes;
}

}  // namespace h2o
