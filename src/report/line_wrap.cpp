#include "h2o/report/line_wrap.hpp"

#include <stdexcept>

namespace h2o {

namespace {
constexpr std::size_t kMinWidth = 20;
constexpr std::size_t kHangingIndent = 2;  // a continued line starts 2 columns further in

// Where a byte stands in a colour code: ESC, then '[', parameters, and a final byte from '@' to
// '~' (ECMA-48's control sequence; the step view writes no other). Stored as an int (0, 1, 2).
enum Escape { None = 0, AfterEsc = 1, InSequence = 2 };
// The state after byte c; `visible` is set when c takes a column (a UTF-8 lead or ASCII byte).
Escape next_escape(Escape state, unsigned char c, bool* visible) {
  *visible = false;
  switch (state) {
    case AfterEsc:
      return c == '[' ? InSequence : None;
    case InSequence:
      return c >= 0x40 && c <= 0x7E ? None : InSequence;
    case None:
      break;
  }
  if (c == 0x1B) return AfterEsc;
  *visible = (c & 0xC0) != 0x80;  // not a UTF-8 continuation byte
  return None;
}
}  // namespace

std::size_t visible_width(const std::string& text) {
  std::size_t width = 0;
  Escape state = None;
  for (char c : text) {
    bool visible = false;
    state = next_escape(state, static_cast<unsigned char>(c), &visible);
    width += visible ? 1 : 0;
  }
  return width;
}

WrappingBuffer::WrappingBuffer(std::streambuf* target, std::size_t width) : target_(target) {
  set_width(width);
}

WrappingBuffer::~WrappingBuffer() { sync(); }

void WrappingBuffer::set_width(std::size_t width) {
  if (width < kMinWidth) {
    throw std::invalid_argument("WrappingBuffer: a width of " + std::to_string(width) +
                                " columns is below " + std::to_string(kMinWidth));
  }
  width_ = width;
}

void WrappingBuffer::line_restarted() {
  end_word();
  column_ = indent_ = spaces_ = 0;
  line_start_ = true;
  word_on_line_ = false;
}

void WrappingBuffer::put(const std::string& text) {
  target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
}

void WrappingBuffer::end_word() {
  if (word_.empty()) return;
  const std::size_t continued = indent_ + kHangingIndent;
  // Too long for this line, and the line holds a word already: a new line. (A word wider than a
  // whole line stays whole on a line of its own, for the terminal to break.)
  if (column_ + spaces_ + word_width_ > width_ && word_on_line_) {
    put("\n" + std::string(continued, ' '));
    column_ = continued;
  } else {
    put(std::string(spaces_, ' '));
    column_ += spaces_;
  }
  put(word_);
  column_ += word_width_;
  word_on_line_ = word_on_line_ || word_width_ > 0;
  spaces_ = word_width_ = 0;
  word_.clear();
}

WrappingBuffer::int_type WrappingBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  const bool plain = escape_ == None;
  if (plain && ch == '\n') {
    end_word();
    put("\n");  // spaces at the end of a line are dropped: they show nothing
    line_restarted();
  } else if (plain && ch == ' ' && line_start_) {
    end_word();  // a colour code before the indentation
    put(" ");    // indentation goes out at once and stays the line's
    ++column_;
    ++indent_;
  } else if (plain && ch == ' ') {
    end_word();
    ++spaces_;
  } else {
    bool visible = false;
    escape_ = next_escape(static_cast<Escape>(escape_), static_cast<unsigned char>(ch), &visible);
    word_ += ch;
    word_width_ += visible ? 1 : 0;
    line_start_ = line_start_ && !visible;
  }
  return c;
}

int WrappingBuffer::sync() {
  // What was written so far shows now (a prompt waiting on the same line, its last space too).
  end_word();
  put(std::string(spaces_, ' '));
  column_ += spaces_;
  spaces_ = 0;
  return target_->pubsync();
}

}  // namespace h2o
