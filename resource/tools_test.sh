#!/bin/bash
# Runs //resource:compile and //resource:inspect on good and bad inputs and checks exit
# codes and messages: bad files are reported with exit 1, never a crash.
set -u
COMPILE=resource/compile
INSPECT=resource/inspect
LEVEL=resource/testdata/level.json
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
source testing/tool_checks.sh

expect 2 "usage" $COMPILE
expect 2 "usage" $INSPECT
# resource/'s compile knows no component type: it checks the level and, with
# --skip-unknown, keeps entities, hierarchy and names.
expect 1 "entities\[0\] \(\"car\"\)\.components\[0\]: unknown component type \"transform\"" \
  $COMPILE $LEVEL "$TMP/level.entities"
expect 0 "4 entities, .* 5 warnings" $COMPILE --skip-unknown $LEVEL "$TMP/level.entities"
expect 0 "warning: .*skipped component of unknown type \"render_data\"" \
  $COMPILE --skip-unknown $LEVEL "$TMP/level.entities"
expect 0 "entities +4 \(2 roots, 2 children\)" $INSPECT "$TMP/level.entities"
expect 0 "\(entity names\) +4 instances" $INSPECT "$TMP/level.entities"

# Other endianness: compiles, and inspect explains why it cannot load it.
expect 0 "big-endian|little-endian" $COMPILE --skip-unknown --endian=big $LEVEL "$TMP/big.entities"
expect 0 "" $COMPILE --skip-unknown --endian=little $LEVEL "$TMP/little.entities"
if cmp -s "$TMP/big.entities" "$TMP/level.entities"; then other="$TMP/little.entities"; else other="$TMP/big.entities"; fi
expect 1 "blob is (big|little)-endian but this machine reads" $INSPECT "$other"

# Bad files.
expect 1 "No such file|NOT_FOUND" $INSPECT "$TMP/missing.entities"
head -c 40 "$TMP/level.entities" >"$TMP/truncated.entities"
expect 1 "invalid: .*truncated" $INSPECT "$TMP/truncated.entities"
: >"$TMP/empty.entities"
expect 1 "invalid" $INSPECT "$TMP/empty.entities"
expect 1 "invalid: .*magic" $INSPECT $LEVEL
printf '{"entities": [\n  {"name": tru}\n]}' >"$TMP/bad.json"
expect 1 "line 2, column 15" $COMPILE "$TMP/bad.json" "$TMP/bad.entities"
expect 1 "entities\[0\]: unknown key \"nmae\"" $COMPILE \
  <(echo '{"entities": [{"nmae": "x"}]}') "$TMP/x.entities"

no_temporary_files() { ! ls -a "$1" | grep -q '\.tmp'; }

# Directories are named as such, as input and as output.
mkdir -p "$TMP/dir"
expect 1 "dir: is a directory" $INSPECT "$TMP/dir"
expect 1 "dir: is a directory" $COMPILE "$TMP/dir" "$TMP/x.entities"
expect 1 "dir: is a directory" $COMPILE --skip-unknown $LEVEL "$TMP/dir"

# The output is never the input: same path, symlink, hard link. Nothing is written.
cp $LEVEL "$TMP/own.json"
ln -s "$TMP/own.json" "$TMP/own_symlink.entities"
ln "$TMP/own.json" "$TMP/own_hardlink.entities"
expect 1 "refusing to write .*own.json: it is the input file" \
  $COMPILE --skip-unknown "$TMP/own.json" "$TMP/own.json"
expect 1 "refusing to write .*own_symlink.entities: it is the input file" \
  $COMPILE --skip-unknown "$TMP/own.json" "$TMP/own_symlink.entities"
expect 1 "refusing to write .*own_hardlink.entities: it is the input file" \
  $COMPILE --skip-unknown "$TMP/own.json" "$TMP/own_hardlink.entities"
check "the level survives the refused writes" cmp -s $LEVEL "$TMP/own.json"
check "the symlink is still a symlink" test -L "$TMP/own_symlink.entities"

# A failed write (file size limit of 4 KiB, SIGXFSZ ignored so write(2) fails with
# EFBIG) gives the OS reason, keeps the old output and leaves no temporary file.
{
  echo '{"entities": ['
  for i in $(seq 1 200); do echo "{\"name\": \"entity $i, named at length to fill more than four kibibytes\"},"; done
  echo '{}]}'
} >"$TMP/big.json"
mkdir -p "$TMP/full"
echo old >"$TMP/full/out.entities"
expect 1 "out.entities.*write failed.*File too large" \
  bash -c "trap '' XFSZ; ulimit -f 4; exec $COMPILE $TMP/big.json $TMP/full/out.entities"
check "the old output survives a failed write" grep -qx old "$TMP/full/out.entities"
check "no temporary file after a failed write" no_temporary_files "$TMP/full"
expect 0 "201 entities" $COMPILE "$TMP/big.json" "$TMP/full/out.entities"
check "no temporary file after a good write" no_temporary_files "$TMP/full"
expect 1 "missing/out.entities.*cannot create.*No such file or directory" \
  $COMPILE --skip-unknown $LEVEL "$TMP/missing/out.entities"

# `bazel run` sets BUILD_WORKING_DIRECTORY: relative paths are resolved there, not in
# the runfiles tree the tool runs in.
mkdir -p "$TMP/user"
cp $LEVEL "$TMP/user/level.json"
expect 0 "4 entities" env BUILD_WORKING_DIRECTORY="$TMP/user" $COMPILE --skip-unknown level.json out.entities
check "compile wrote into BUILD_WORKING_DIRECTORY" test -s "$TMP/user/out.entities"
expect 0 "entities +4 " env BUILD_WORKING_DIRECTORY="$TMP/user" $INSPECT out.entities
expect 1 "$TMP/user/nothing.entities: No such file" env BUILD_WORKING_DIRECTORY="$TMP/user" $INSPECT nothing.entities

finish "tool checks"
