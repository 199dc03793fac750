// test_explorer_page.cpp: the explorer page's escaping, its data and its refusals
// (report/explorer_page.hpp), and the explorer's --budget (app/explore_options.hpp).
// tests/check_explorer_page.cmake loads real pages in a browser.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/explore_options.hpp"
#include "h2o/base/utf8.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/explorer_page.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("json strings are safe inside a script element", "[explorer_page]") {
  CHECK(json_string("cat") == "\"cat\"");
  CHECK(json_string("a\"b\\c\nd\te") == "\"a\\\"b\\\\c\\nd\\u0009e\"");
  CHECK(json_string("</script><!--&") == "\"\\u003c/script\\u003e\\u003c!--\\u0026\"");
  CHECK(json_string("caf\xc3\xa9") == "\"caf\xc3\xa9\"");               // valid UTF-8 stays
  CHECK(json_string("\xe2\x80\xa8") == "\"\\u2028\"");                   // a JavaScript line end
  CHECK(json_string("a\xff" "b") == "\"a\\ufffdb\"");                    // not UTF-8
  CHECK(json_string("\xe2\x82") == "\"\\ufffd\\ufffd\"");                // cut short
  CHECK(json_string("\xc0\xaf") == "\"\\ufffd\\ufffd\"");                // overlong '/'
  CHECK(json_string("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");     // a surrogate
  CHECK(json_string("a\x01\x1b") == "\"a\\u0001\\u001b\"");
  CHECK(is_valid_utf8("caf\xc3\xa9 \xf0\x9f\x99\x82"));
  CHECK_FALSE(is_valid_utf8("\xc3"));
  CHECK_FALSE(is_valid_utf8("\xa9"));
  CHECK(html_escape("<b class='x'>\"&\"</b>") ==
        "&lt;b class=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/b&gt;");
}

// Traces of h2o and window (budget 6) on a random model reading n tokens, and their page.
struct TestPage {
  std::vector<CacheTrace> traces;
  ExplorerPage page;
};

TestPage test_page(std::size_t n, std::size_t budget) {
  const auto weights = h2o_test::random_model(std::max<std::size_t>(n, 32), 3);
  const std::vector<int> tokens = h2o_test::random_tokens(n, weights->config.vocab_size, 3);
  Decoder full(weights, policy_of<FullCachePolicy>(), n);
  const TeacherForcedRun reference = read_with_teacher_forcing(full, tokens);
  TestPage out;
  for (const std::string name : {"h2o", "window"}) {
    Decoder decoder(weights, make_policy(name, settings_for_budget(name, budget)), n);
    out.traces.push_back(trace_cache(decoder, tokens, &reference));
  }
  ExplorerPage& page = out.page;
  page.title = "Title <with> & markup";
  page.about = {"about 'this'"};
  page.command = "explore --text \"</script>\"";
  for (std::size_t p = 0; p < tokens.size(); ++p) page.texts.push_back(" w" + std::to_string(p));
  page.word_starts.assign(tokens.size(), true);
  page.budget = budget;
  page.full_kv_bytes_per_token = full.live_kv_bytes() / (n - 1);  // n - 1 tokens read
  page.policies = {{"h2o", "H2O", "heavy hitter", budget / 2, &out.traces[0]},
                   {"window", "window", "", budget, &out.traces[1]}};
  return out;
}

}  // namespace

TEST_CASE("an explorer page holds its data and nothing from outside", "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  const std::vector<CacheTrace>& traces = test.traces;
  const std::vector<int> tokens(page.texts.size());
  page.texts[3] = "</script><script>alert(1)</script>";
  const std::string html = explorer_page_html(page);
  // Exactly the page's own two script elements; the hostile word and command are inert.
  CHECK(count_of(html, "<script") == 2);
  CHECK(count_of(html, "</script>") == 2);
  CHECK(html.find("Title &lt;with&gt; &amp; markup") != std::string::npos);
  CHECK(html.find("\\u003c/script\\u003e\\u003cscript\\u003ealert(1)") != std::string::npos);
  // Self-contained: nothing is fetched from anywhere.
  for (const char* outside : {"http:", "https:", "src=", "@import", "url(", "<link"}) {
    INFO(outside);
    CHECK(html.find(outside) == std::string::npos);
  }
  // The data: both policies, every step's agreement so far, the evictions of layer 0, KV head 0.
  CHECK(html.find("\"name\":\"h2o\"") != std::string::npos);
  CHECK(html.find("\"name\":\"window\"") != std::string::npos);
  CHECK(html.find("\"steps\":15,\"layers\":" + std::to_string(traces[0].layers)) !=
        std::string::npos);
  std::string evicted = "{\"evicted\":[";
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    evicted += (p ? "," : "") + std::to_string(traces[1].heads[0][0].evicted_at[p]);
  }
  CHECK(html.find(evicted + "]") != std::string::npos);
  // The KV bytes: the full cache's per token, and each policy's after every step.
  CHECK(html.find("\"full_kv_bytes_per_token\":" + std::to_string(page.full_kv_bytes_per_token) +
                  ",") != std::string::npos);
  std::string kv_bytes = "\"kv_bytes\":[";
  for (std::size_t t = 0; t < traces[0].steps; ++t) {
    kv_bytes += (t ? "," : "") + std::to_string(traces[0].kv_bytes[t]);
  }
  CHECK(html.find(kv_bytes + "]") != std::string::npos);
  // A window never keeps scores, so its page carries none.
  CHECK(html.find("\"has_scores\":false") != std::string::npos);

  // Refusals: no policy, three policies, words that do not match the traces.
  ExplorerPage bad = page;
  bad.policies.clear();
  CHECK_THROWS_AS(explorer_page_html(bad), std::invalid_argument);
  bad.policies = {page.policies[0], page.policies[1], page.policies[0]};
  CHECK_THROWS_AS(explorer_page_html(bad), std::invalid_argument);
  bad = page;
  bad.texts.pop_back();
  bad.word_starts.pop_back();
  CHECK(h2o_test::error_of<std::exception>([&] { explorer_page_html(bad); }) ==
        "the trace of policy 'h2o' does not match the page's text or the other trace");
  bad = page;
  bad.word_starts.pop_back();
  CHECK(h2o_test::error_of<std::exception>([&] { explorer_page_html(bad); }) ==
        "an explorer page needs a word start for each of its 16 tokens, got 15");
  bad = page;
  bad.full_kv_bytes_per_token = 0;
  CHECK(h2o_test::error_of<std::exception>([&] { explorer_page_html(bad); }) ==
        "an explorer page needs the full cache's KV bytes per token");
}

TEST_CASE("an explorer page says where a passage read twice lies, and refuses impossible ones",
          "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  CHECK(explorer_page_html(page).find("\"readings\":[0,0,0],") != std::string::npos);
  page.readings = {1, 9, 4};  // [BOS] 1-4, 5-8 between, 9-12, 13-15 after
  CHECK(explorer_page_html(page).find("\"readings\":[1,9,4],") != std::string::npos);
  page.readings = {1, 12, 4};  // the second reading ends at the last token
  CHECK_NOTHROW(explorer_page_html(page));
  for (const ExplorerReadings bad : std::vector<ExplorerReadings>{
           {0, 9, 4}, {1, 4, 4}, {1, 13, 4}, {1, 17, 4}, {9, 1, 4}, {1, 5, 20}}) {
    page.readings = bad;
    INFO(bad.first << ", " << bad.second << ", " << bad.passage);
    CHECK_THROWS_AS(explorer_page_html(page), std::invalid_argument);
  }
  page.readings = {1, 13, 4};
  CHECK(h2o_test::error_of<std::exception>([&] { explorer_page_html(page); }) ==
        "an explorer page's two readings of 4 tokens at 1 and 13 must follow BOS, not overlap, "
        "and fit its 16 tokens");
}

TEST_CASE("an explorer page shows control characters of file names visibly", "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  page.title = "story\x1b[31m\x01.txt";
  page.about = {"reading a\x07" "b\x1b]0;x\x07.txt \xff"};
  page.command = "explore --text 'a\x1b[2Jb.txt'";
  const std::string html = explorer_page_html(page);
  // No control character but newline anywhere in the page, and the names shown escaped.
  std::size_t controls = 0;
  for (char c : html) controls += (static_cast<unsigned char>(c) < 0x20 && c != '\n') ? 1 : 0;
  CHECK(controls == 0);
  CHECK(is_valid_utf8(html));
  CHECK(html.find("<h1>story\\x1b[31m\\x01.txt</h1>") != std::string::npos);
  CHECK(html.find("<p>reading a\\x07b\\x1b]0;x\\x07.txt \\xff</p>") != std::string::npos);
  CHECK(html.find("<code>explore --text &#39;a\\x1b[2Jb.txt&#39;</code>") != std::string::npos);
}

TEST_CASE("the explorer's size estimate is close to the page it writes", "[explorer_page]") {
  // Texts of several lengths and budgets, h2o (with scores) and window (without): the estimate
  // made before the runs, against the page's real bytes.
  for (const auto& [n, budget] : std::vector<std::pair<std::size_t, std::size_t>>{
           {16, 6}, {40, 8}, {90, 30}, {200, 20}, {200, 150}}) {
    TestPage test = test_page(n, budget);
    if (n >= 40) test.page.readings = {1, n - 12, 12};  // a passage read twice, marked
    const CacheTrace& trace = test.traces[0];
    const std::uint64_t estimate =
        explorer_page_bytes(test.page, trace.layers, trace.kv_heads,
                            {{budget, true}, {budget, false}});
    const double real = static_cast<double>(explorer_page_html(test.page).size());
    INFO("n " << n << ", budget " << budget << ": estimate " << estimate << ", page " << real);
    CHECK(std::abs(static_cast<double>(estimate) / real - 1.0) < 0.02);
  }
}

TEST_CASE("the explorer's budget is a share or a number of tokens", "[explorer_page]") {
  CHECK(parse_explore_budget("10%").for_text(912) == 91);
  CHECK(parse_explore_budget("10%").describe(912) ==
        "91 tokens per layer and KV head (10% of 912)");
  CHECK(parse_explore_budget("64").for_text(912) == 64);
  CHECK(parse_explore_budget("100%").for_text(50) == 50);
  for (const char* bad : {"", "%", "ten", "10 %", "-5", "1.5%", "12345678"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_explore_budget(bad), UsageError);
  }
  CHECK(h2o_test::error_of<std::exception>([] { parse_explore_budget("0%"); }) ==
        "--budget must be between 1% and 100%, got 0%");
  CHECK(h2o_test::error_of<std::exception>([] { parse_explore_budget("1"); }) ==
        "--budget must be at least 2 tokens, got 1");
}

TEST_CASE("the explorer's verdict says better, worse or no difference from its interval",
          "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  CHECK(verdict_html(page).empty());  // no verdict asked for: no block
  page.has_verdict = true;
  ExplorerVerdict& v = page.verdict;
  v.subject = "h2o";
  v.against = "window";
  v.units = "29 blocks of 32 predictions";
  v.difference = {-0.03, -0.05, -0.01, 29, 900};  // wholly below 0: lower perplexity
  CHECK(verdict_html(page).find("data-verdict=\"better\"") != std::string::npos);
  CHECK(verdict_html(page).find("on this text: better</b></summary>") != std::string::npos);
  CHECK(verdict_text(v) ==
        "h2o's perplexity -3.0% against window's (95% interval -5.0% to -1.0%, 29 blocks of 32 "
        "predictions): better");
  v.difference = {0.04, 0.01, 0.07, 29, 900};  // wholly above 0
  CHECK(verdict_html(page).find("data-verdict=\"worse\"") != std::string::npos);
  CHECK(verdict_html(page).find("on this text: worse</b></summary>") != std::string::npos);
  v.difference = {-0.003, -0.06, 0.069, 29, 900};  // holds 0
  CHECK(verdict_html(page).find("data-verdict=\"within-noise\"") != std::string::npos);
  CHECK(verdict_html(page).find("no difference within noise</b>") != std::string::npos);
  v.difference = {-0.2, -0.3, -0.1, 2, 60};  // too few units for an interval: no verdict
  CHECK(verdict_html(page).find("data-verdict=\"within-noise\"") != std::string::npos);
  // The block sits in the page's header, once.
  CHECK(count_of(explorer_page_html(page), "<details id=\"verdict\"") == 1);
}

TEST_CASE("the explorer's verdict says the full cache's names first, and how bytes were weighed",
          "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  page.has_verdict = true;
  ExplorerVerdict& v = page.verdict;
  v.subject = "h2o";
  v.against = "window";
  v.units = "29 blocks of 32 predictions";
  v.difference = {0.04, 0.01, 0.07, 29, 900};
  v.full_names = full_cache_names(0, 22, 64);
  CHECK(verdict_text(v) ==
        "the full cache recalls 0 of 22 long-gap names: this model does not use the story's "
        "names here, so what policies recall of them says nothing of their caches; compare "
        "perplexity only; h2o's perplexity +4.0% against window's (95% interval +1.0% to +7.0%, "
        "29 blocks of 32 predictions): worse");
  v.full_names = full_cache_names(5, 10, 64);
  v.names = names_against(4, 3, 10);
  v.against_at = "window's at h2o's KV bytes, 54 tokens";
  v.bytes = "at 4-bit the same tokens are not the same bytes";
  CHECK(verdict_text(v) ==
        "the full cache recalls 5 of 10 long-gap names; h2o's perplexity +4.0% against window's "
        "at h2o's KV bytes, 54 tokens (95% interval +1.0% to +7.0%, 29 blocks of 32 "
        "predictions): worse; 4 against 3 of 10 long-gap names");
  CHECK(verdict_html(page).find("<p>at 4-bit the same tokens are not the same bytes</p>") !=
        std::string::npos);
  CHECK(verdict_html(page).find("h2o against window at equal KV bytes on this text: worse") !=
        std::string::npos);
  CHECK(full_cache_names(0, 0, 64) ==
        "the text has no long-gap names (last seen more than 64 tokens back): compare "
        "perplexity only");
  CHECK(full_cache_count(0, 3) == "the full cache recalls 0 of 3 long-gap names");
  CHECK(full_cache_count(0, 0) == "the text has no long-gap names");
  CHECK(names_comparable(1, 3));
  CHECK_FALSE(names_comparable(0, 3));
  CHECK_FALSE(names_comparable(0, 0));
}

TEST_CASE("the explorer's verdict block escapes hostile names and texts", "[explorer_page]") {
  TestPage test = test_page(16, 6);
  ExplorerPage& page = test.page;
  page.has_verdict = true;
  ExplorerVerdict& v = page.verdict;
  v.subject = "<script>alert(1)</script>";
  v.against = "win\"dow' & co";
  v.difference = {0.04, 0.01, 0.07, 29, 900};
  v.units = "blocks</p>";
  v.names = "4 against 4 of 10 <b>names</b>";
  v.held = {"h2o <img src=x onerror=alert(1)> (1 of 16 caches)", "window \x1b[31mnone"};
  v.reason = "because </div><script>alert(2)</script>";
  const std::string block = verdict_html(page);
  for (const char* raw :
       {"<script", "<img", "</div><", "<b>names", "blocks</p>", "\x1b", "\"dow"}) {
    INFO(raw);
    CHECK(block.find(raw) == std::string::npos);
  }
  CHECK(block.find("&lt;script&gt;alert(1)&lt;/script&gt; against win&quot;dow&#39; &amp; co") !=
        std::string::npos);
  CHECK(block.find("h2o &lt;img src=x onerror=alert(1)&gt; (1 of 16 caches); window "
                   "\\x1b[31mnone") != std::string::npos);
  CHECK(block.find("Why: because &lt;/div&gt;&lt;script&gt;alert(2)&lt;/script&gt;") !=
        std::string::npos);
  // The whole page keeps exactly its own two script elements and one verdict block.
  const std::string html = explorer_page_html(page);
  CHECK(count_of(html, "<script") == 2);
  CHECK(count_of(html, "</div>") == count_of(html, "<div"));
  CHECK(count_of(html, "</details>") == count_of(html, "<details"));
}

TEST_CASE("names held beyond a window's reach count the caches holding them", "[explorer_page]") {
  // A trace of 1 layer x 2 KV heads over 10 tokens; a window of 4 reaches positions 6..9.
  CacheTrace trace;
  trace.layers = 1;
  trace.kv_heads = 2;
  trace.steps = 9;
  trace.heads.assign(1, std::vector<HeadTrace>(2));
  for (HeadTrace& head : trace.heads[0]) head.evicted_at.assign(10, 3);  // all gone at step 3
  trace.heads[0][0].evicted_at[1] = kNeverEvicted;                       // "Mia" (1) held by head 0
  trace.heads[0][1].evicted_at[2] = kNeverEvicted;  // "Zoë" (2..3) held by head 1, a piece
  trace.heads[0][0].evicted_at[7] = kNeverEvicted;  // "Tom" (7) is within the window's reach
  NameTokens names;
  names.names = {"Tom", "Zoë", "Mia"};
  const std::vector<NameMention> mentions = {{2, 1, 1}, {1, 2, 3}, {0, 7, 7}, {2, 8, 8}};
  CHECK(names_held_beyond(trace, mentions, names, 4) ==
        std::vector<std::string>{"Mia (1 of 2 caches)", "Zoë (1 of 2 caches)"});
  trace.heads[0][1].evicted_at[1] = kNeverEvicted;
  CHECK(names_held_beyond(trace, mentions, names, 4).front() == "Mia (2 of 2 caches)");
  CHECK(names_held_beyond(trace, mentions, names, 10).empty());  // the window reaches them all
}
