#include "h2o/app/default_files.hpp"


#include "h2o/base/files.hpp"

namespace h2o {

std::string data_dir() { return H2O_DATA_DIR; }

ModelFiles default_model_files() {
  return {data_dir() + "/model.bin", data_dir() + "/tokenizer.bin"};
}

std::string default_text_file() { return data_dir() + "/heldout_story.txt"; }

std::string default_names_file() { return data_dir() + "/names.txt"; }

void add_model_options(ArgParser& args) {
  const ModelFiles defaults = default_model_files();
  args.add_option("model", "PATH", defaults.model, "llama2.c checkpoint (legacy format)");
  args.add_option("tokenizer", "PATH", defaults.tokenizer, "llama2.c tokenizer for that model");
}

ModelFiles model_files_from_options(const ArgParser& args) {
  return {args.text("model"), args.text("tokenizer")};
}

void add_text_option(ArgParser& args) {
  args.add_option("text", "PATH", default_text_file(), "the text to read");
}

std::string read_text_option(const ArgParser& args) {
  const std::string path = args.text("text");
  return read_text_file(path, "text file '" + path + "'", kMaxTextBytes);
}

}  // namespace h2o
