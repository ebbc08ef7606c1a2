// The files of a saved model (ag/saved_model.h): the manifest's lines, the checksum that guards
// every file, and writing a file whole or not at all. Internal: save, load and ag-aot use it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ag::saved_model::detail {

inline constexpr const char* kManifest = "saved_model.txt";
inline constexpr const char* kVariablesFile = "variables.graph";
inline constexpr const char* kGraphsDir = "graphs";
inline constexpr const char* kObjectsDir = "objects";
inline constexpr const char* kMagic = "agc saved model ";

// 64-bit FNV-1a, as 16 hex digits: catches a truncated, extended or altered file (not an
// attacker: a saved model is trusted code, as TensorFlow's is).
std::string checksum(std::string_view bytes);

// Writes `bytes` to a temporary file next to `path` and renames it over `path`: a reader never
// sees half a file, and a failed save leaves the previous file. ValueError naming `who` (the
// caller, for the message: "ag::saved_model::save", "ag-aot") and the path.
void write_whole(const std::filesystem::path& path, std::string_view bytes, std::string_view who);
// The file's bytes; ValueError naming `who` and the path when it cannot be read.
std::string read_all(const std::filesystem::path& path, std::string_view who);

// The manifest:
//   agc saved model <version>
//   file <relative path> <size> <checksum>            (one per graph file, and the variables)
//   signature <name> <relative path> <signature text>
//   variable <name>\t<the text graphs name it by>     (in the order of variables.graph's results)
//   object <signature> <cpu level> <relative path>    (SaveOptions::compiled_for, widest first)
//   end <checksum of every line above>
struct Manifest {
  int version = 0;
  std::string writer;  // "agc <version>" of the program that saved (CHANGELOG.md)
  struct File {
    std::string path;
    uint64_t size = 0;
    std::string checksum;
  };
  struct SignatureLine {
    std::string name, path, text;
  };
  struct VariableLine {
    std::string name, text;
  };
  struct ObjectLine {
    std::string signature, cpu, path;
  };
  std::vector<File> files;
  std::vector<SignatureLine> signatures;
  std::vector<VariableLine> variables;
  std::vector<ObjectLine> objects;
};

std::string manifest_text(const Manifest& m);
// Parses and checks the manifest's own checksum and version; ValueError naming `where`. A file
// line naming a path outside the model (`..`, absolute) is refused here, before anything reads it.
Manifest parse_manifest(std::string_view text, const std::string& where);

}  // namespace ag::saved_model::detail
