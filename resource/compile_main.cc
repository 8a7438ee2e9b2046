// compile: the command-line entity compiler. Reads a level JSON file and writes the
// entity resource blob.
//
//   bazel run //resource:compile -- [--skip-unknown] [--endian=little|big] [--no-names]
//       [--threads=N] level.json level.entities      (one command line)
//
// Knows no component type: resource/ knows none. It checks a level's structure and, with
// --skip-unknown, writes a blob of its entities, hierarchy and names. A game's own
// compile tool (component/tools.h; Strata's demo has //engine:compile) knows its
// components. Exit status 0 on
// success, 1 on a compile or I/O error (the message names the entity path, component
// and JSON line/column), 2 on a usage error. Warnings (skipped unknown components) go
// to stderr. File handling is resource/tool_io.h's: relative paths are relative to the
// directory `bazel run` was started from; the output is written atomically (a failed
// write leaves the old file and no temporary file) and never replaces the input (the
// same file, also through a symlink or hard link, is refused before anything is
// written).
#include "resource/entity_compiler.h"
#include "resource/tool_commands.h"

int main(int argc, char** argv) {
  return strata::RunCompileCommand(strata::EntityCompiler(), argc, argv);
}
