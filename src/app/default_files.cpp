#include "h2o/app/default_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "h2o/base/files.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

std::string data_dir() { return H2O_DATA_DIR; }

std::string external_models_dir() {
  const char* from_environment = std::getenv("H2O_MODELS_DIR");
  return from_environment != nullptr ? from_environment : H2O_MODELS_DIR;
}

ModelFiles default_model_files() {
  const std::string folder = external_models_dir() + "/stories260K";
  return {folder + "/stories260K.bin", folder + "/tok512.bin"};
}

std::string default_text_file() { return data_dir() + "/story.txt"; }

void add_model_options(ArgParser& args) {
  const ModelFiles defaults = default_model_files();
  // The help states each file's size limit: the loaders refuse larger files (and non-files).
  args.add_option(
      "model", "PATH", defaults.model,
      "llama2.c checkpoint (legacy format, at most " + byte_size_text(kMaxCheckpointBytes) + ")");
  args.add_option("tokenizer", "PATH", defaults.tokenizer,
                  "llama2.c tokenizer for that model (at most " +
                      byte_size_text(Tokenizer::kMaxFileBytes) + ")");
}

ModelFiles model_files_from_options(const ArgParser& args) {
  return {args.text("model"), args.text("tokenizer")};
}

bool explain_missing_default_model(const ArgParser& args, const std::string& program) {
  if (args.given("model") || args.given("tokenizer")) return false;  // named: must exist
  const ModelFiles files = default_model_files();
  const bool missing =
      !std::filesystem::exists(files.model) || !std::filesystem::exists(files.tokenizer);
  if (!missing) return false;
  std::cout << program << ": the real model is not in its default place:\n";
  for (const std::string& path : {files.model, files.tokenizer}) {
    if (!std::filesystem::exists(path)) std::cout << "  missing: " << path << "\n";
  }
  std::cout << "\nIt needs karpathy's stories260K (MIT licence): stories260K.bin and tok512.bin\n"
            << "from the Hugging Face repository karpathy/tinyllamas, folder stories260K.\n"
            << "Download both, then run:\n"
            << "  build/bin/" << program
            << " --model PATH/stories260K.bin --tokenizer PATH/tok512.bin\n"
            << "or set H2O_MODELS_DIR to the folder that holds stories260K/.\n";
  return true;
}

void add_text_option(ArgParser& args) {
  args.add_option("text", "PATH", default_text_file(),
                  "the text to read (at most " + byte_size_text(kMaxTextBytes) + ")");
}

std::string read_text_option(const ArgParser& args) {
  const std::string path = args.text("text");
  return read_text_file(path, "text file '" + path + "'", kMaxTextBytes);
}

}  // namespace h2o
