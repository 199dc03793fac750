// default_files.hpp: where the programs look for a model, its tokenizer and a text when the user
// names none, and the command-line options that name them. One owner for these paths: lesson 09,
// generate and compare_policies all ask here.
#pragma once

#include <cstdint>
#include <string>

#include "h2o/app/cli.hpp"

namespace h2o {

// Largest text file a program reads (far more than any model here can read in one sequence).
constexpr std::uint64_t kMaxTextBytes = 1ull << 20;

// The project's data/ folder (the source tree's, fixed at build time).
std::string data_dir();

// The folder holding external models (stories260K/): $H2O_MODELS_DIR when set, else the folder
// chosen at build time (CMake's H2O_MODELS_DIR, by default ../shared/models next to the project).
std::string external_models_dir();

struct ModelFiles {
  std::string model;      // llama2.c checkpoint
  std::string tokenizer;  // llama2.c tokenizer
};

// The model a program runs when the user names none.
ModelFiles default_model_files();

// The text lesson 09 and compare_policies read when the user names none.
std::string default_text_file();

// --model PATH and --tokenizer PATH, defaulting to default_model_files().
void add_model_options(ArgParser& args);
ModelFiles model_files_from_options(const ArgParser& args);

// True when the user named no model and the default one is missing: then `program` has printed,
// to stdout, where the model comes from and how to pass it, and should stop normally.
bool explain_missing_default_model(const ArgParser& args, const std::string& program);

// --text PATH, defaulting to default_text_file(); read_text_option reads it (regular files of at
// most kMaxTextBytes only).
void add_text_option(ArgParser& args);
std::string read_text_option(const ArgParser& args);

}  // namespace h2o
