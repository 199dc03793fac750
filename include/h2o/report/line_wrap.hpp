// line_wrap.hpp: text that fits a terminal narrower than the lessons' 100 columns, broken at the
// spaces between words, never inside one.
//
// A terminal breaks a line that is too long wherever the last column falls ("evi" | "cted"); on a
// school projector at 80 columns that is most of a lesson's table rows. A WrappingBuffer sits
// between a stream and its real output and moves the word that would cross the last column to a
// new line, indented two columns more than the line it continues, so a reader sees where a line
// goes on. A line that fits passes byte for byte (but for spaces at its end, which show nothing);
// a word wider than the whole terminal stays whole on a line of its own, for the terminal to
// break. Colour codes (ESC [ ... letter) take no column,
// and a UTF-8 character takes one.
//
// Dimension legend: none (text only).
#pragma once

#include <cstddef>
#include <streambuf>
#include <string>

namespace h2o {

// Columns `text` takes on a terminal: one per UTF-8 character, none for a colour code.
std::size_t visible_width(const std::string& text);

class WrappingBuffer : public std::streambuf {
 public:
  // Writes to `target`, wrapping at `width` columns (at least 20: narrower is refused with
  // std::invalid_argument, since the indentation alone could fill such a line).
  WrappingBuffer(std::streambuf* target, std::size_t width);
  ~WrappingBuffer() override;

  void set_width(std::size_t width);
  std::size_t width() const { return width_; }
  // The terminal's cursor is at the start of a line although no newline came through here (the
  // user pressed Enter, whose echo moved it, or the screen was cleared).
  void line_restarted();

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  void put(const std::string& text);  // to the target, as it is
  void end_word();                    // the word read so far goes out, on this line or the next

  std::streambuf* target_;
  std::size_t width_;
  std::size_t column_ = 0;      // columns already written on the terminal's current line
  std::size_t indent_ = 0;      // leading spaces of the line being written
  bool line_start_ = true;      // only leading spaces so far on this line
  bool word_on_line_ = false;   // a word was written on the terminal's current line
  std::size_t spaces_ = 0;      // spaces after the last word, not yet written
  std::string word_;            // the word being read
  std::size_t word_width_ = 0;  // its columns
  int escape_ = 0;              // in a colour code: 0 no, 1 after ESC, 2 after ESC [
};

}  // namespace h2o
