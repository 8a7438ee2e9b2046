#include "resource/tool_io.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::byte> Bytes(const std::string& s) {
  std::vector<std::byte> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = static_cast<std::byte>(s[i]);
  return out;
}

// A fresh directory per test, under the test's TEST_TMPDIR.
class ToolIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/tool_io_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  void WriteText(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }

  std::string ReadText(const std::string& name) const {
    absl::StatusOr<std::string> text = ReadToolFileText(Path(name));
    EXPECT_THAT(text, IsOk());
    return text.ok() ? *text : "";
  }

  // The names in the directory: shows a temporary file left behind.
  std::set<std::string> Names() const {
    std::set<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      names.insert(e.path().filename().string());
    }
    return names;
  }

  std::string dir_;
};

// Sets BUILD_WORKING_DIRECTORY for one scope, restoring the previous value.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    had_old_ = std::getenv(kName) != nullptr;
    if (value == nullptr) {
      ::unsetenv(kName);
    } else {
      ::setenv(kName, value, 1);
    }
  }
  ~ScopedWorkingDirectory() {
    if (had_old_) {
      ::setenv(kName, old_.c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
  }

 private:
  static constexpr char kName[] = "BUILD_WORKING_DIRECTORY";
  std::string old_;
  bool had_old_ = false;
};

// The header's example: a tool that turns its input into an upper-case output.
absl::Status UpperCaseTool(const std::string& in_arg, const std::string& out_arg) {
  const std::string in = ResolveToolPath(in_arg);
  const std::string out = ResolveToolPath(out_arg);
  STRATA_RETURN_IF_ERROR(CheckToolOutputPath(out, {in}));
  STRATA_ASSIGN_OR_RETURN(std::string text, ReadToolFileText(in));
  absl::AsciiStrToUpper(&text);
  const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()),
                                     reinterpret_cast<const std::byte*>(text.data() + text.size()));
  return WriteToolFileAtomically(out, bytes, {in});
}

TEST_F(ToolIoTest, HeaderExample) {
  WriteText("in.txt", "level");
  ScopedWorkingDirectory cwd(dir_.c_str());
  EXPECT_THAT(UpperCaseTool("in.txt", "out.txt"), IsOk());
  EXPECT_EQ(ReadText("out.txt"), "LEVEL");
  EXPECT_THAT(UpperCaseTool("in.txt", "in.txt"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(UpperCaseTool("missing.txt", "out2.txt"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(ReadText("in.txt"), "level");
  EXPECT_EQ(Names(), (std::set<std::string>{"in.txt", "out.txt"}));
}

TEST(ResolveToolPath, JoinsRelativePathsToBuildWorkingDirectory) {
  {
    ScopedWorkingDirectory cwd(nullptr);
    EXPECT_EQ(ResolveToolPath("level.json"), "level.json");
    EXPECT_EQ(ResolveToolPath("/abs/level.json"), "/abs/level.json");
  }
  {
    ScopedWorkingDirectory cwd("");
    EXPECT_EQ(ResolveToolPath("level.json"), "level.json");
  }
  {
    ScopedWorkingDirectory cwd("/home/me/game");
    EXPECT_EQ(ResolveToolPath("level.json"), "/home/me/game/level.json");
    EXPECT_EQ(ResolveToolPath("../x/level.json"), "/home/me/game/../x/level.json");
    EXPECT_EQ(ResolveToolPath("./a"), "/home/me/game/./a");
    EXPECT_EQ(ResolveToolPath("/abs/level.json"), "/abs/level.json");
    EXPECT_EQ(ResolveToolPath(""), "");
  }
  {
    ScopedWorkingDirectory cwd("/");
    EXPECT_EQ(ResolveToolPath("level.json"), "/level.json");
  }
}

TEST_F(ToolIoTest, RoundTripsEmptySmallAndLargeFiles) {
  testing::Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  for (size_t size : {size_t{0}, size_t{1}, size_t{65535}, size_t{65536}, size_t{65537},
                      size_t{3 * 1024 * 1024 + 5}}) {
    SCOPED_TRACE(size);
    std::vector<std::byte> bytes(size);
    for (std::byte& b : bytes) b = static_cast<std::byte>(rng.Next32());
    ASSERT_THAT(WriteToolFileAtomically(Path("out.bin"), bytes, {}), IsOk());
    absl::StatusOr<std::vector<std::byte>> read = ReadToolFile(Path("out.bin"));
    ASSERT_THAT(read, IsOk());
    EXPECT_TRUE(*read == bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(read->data()) % 16, 0u);
    absl::StatusOr<std::string> text = ReadToolFileText(Path("out.bin"));
    ASSERT_THAT(text, IsOk());
    EXPECT_EQ(text->size(), size);
    EXPECT_TRUE(std::equal(text->begin(), text->end(), bytes.begin(),
                           [](char c, std::byte b) { return static_cast<std::byte>(c) == b; }));
    EXPECT_THAT(Names(), ElementsAre("out.bin"));
  }
}

TEST_F(ToolIoTest, ReplacesAnExistingOutputWhole) {
  WriteText("out.bin", std::string(100000, 'o'));
  ASSERT_THAT(WriteToolFileAtomically(Path("out.bin"), Bytes("new"), {Path("in.json")}), IsOk());
  EXPECT_EQ(ReadText("out.bin"), "new");
  EXPECT_THAT(Names(), ElementsAre("out.bin"));
}

TEST_F(ToolIoTest, ReadErrorsNameThePathAndTheReason) {
  EXPECT_THAT(ReadToolFile(Path("missing")),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr(Path("missing")), HasSubstr("No such file or directory"))));
  EXPECT_THAT(ReadToolFileText(Path("missing")), StatusIs(absl::StatusCode::kNotFound));
  // A directory is named as one, not a "read error" (reading one fails with EISDIR).
  EXPECT_THAT(ReadToolFile(dir_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(dir_), HasSubstr("is a directory"))));
  EXPECT_THAT(ReadToolFileText(dir_ + "/"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is a directory")));
  WriteText("file", "x");
  EXPECT_THAT(ReadToolFile(Path("file/inner")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("Not a directory")));
  EXPECT_THAT(ReadToolFile(""), StatusIs(absl::StatusCode::kNotFound));
  // A control character in a path is escaped in the message.
  EXPECT_THAT(ReadToolFile(Path("bad\nname")), StatusIs(absl::StatusCode::kNotFound,
                                                        HasSubstr("bad\\nname")));
}

TEST_F(ToolIoTest, ReadsFromAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = "{\"entities\": []}";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  absl::StatusOr<std::string> read = ReadToolFileText("/dev/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ(*read, text);
}

// A regular file longer than fstat said (a /proc file reports size 0) is read to its
// end, not cut at the size known when the read began.
TEST_F(ToolIoTest, ReadsARegularFilePastTheSizeFstatGave) {
  absl::StatusOr<std::string> status = ReadToolFileText("/proc/self/status");
  ASSERT_THAT(status, IsOk());
  EXPECT_THAT(*status, HasSubstr("Name:"));
  EXPECT_THAT(*status, HasSubstr("VmRSS:"));  // well into the file
  absl::StatusOr<std::vector<std::byte>> maps = ReadToolFile("/proc/self/maps");
  ASSERT_THAT(maps, IsOk());
  EXPECT_GT(maps->size(), 100u);
}

TEST_F(ToolIoTest, RefusesToOverwriteAnInputBeforeWritingAnything) {
  WriteText("level.json", "{}");
  const std::string in = Path("level.json");
  const auto expect_refused = [&](const std::string& out, const std::string& input) {
    SCOPED_TRACE(out + " <- " + input);
    EXPECT_THAT(WriteToolFileAtomically(out, Bytes("blob"), {Path("other.json"), input}),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         AllOf(HasSubstr("refusing to write"), HasSubstr(input))));
    EXPECT_THAT(CheckToolOutputPath(out, {input}),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("refusing to write")));
    EXPECT_EQ(ReadText("level.json"), "{}");
  };
  expect_refused(in, in);
  expect_refused(dir_ + "/./level.json", in);  // another spelling
  fs::create_symlink(in, Path("out_link"));    // the output is a symlink to the input
  expect_refused(Path("out_link"), in);
  fs::create_symlink(in, Path("in_link"));  // the input is a symlink to the output
  expect_refused(in, Path("in_link"));
  fs::create_hard_link(in, Path("hard"));
  expect_refused(Path("hard"), in);
  EXPECT_EQ(Names(), (std::set<std::string>{"level.json", "out_link", "in_link", "hard"}));
  // Inputs that do not exist, or other files, do not stop the write.
  EXPECT_THAT(CheckToolOutputPath(Path("out.bin"), {in}), IsOk());
  EXPECT_THAT(CheckToolOutputPath(Path("new.bin"), {in}), IsOk());
  EXPECT_THAT(CheckToolOutputPath(in, {Path("gone")}), IsOk());
  EXPECT_THAT(WriteToolFileAtomically(Path("out.bin"), Bytes("blob"), {Path("gone"), in}), IsOk());
  EXPECT_EQ(ReadText("out.bin"), "blob");
  EXPECT_EQ(ReadText("level.json"), "{}");
}

TEST_F(ToolIoTest, RefusesADirectoryOrSpecialFileAsOutput) {
  EXPECT_THAT(WriteToolFileAtomically(dir_, Bytes("x"), {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is a directory")));
  // Renaming over /dev/null would replace the device node (as root), not write into it.
  EXPECT_THAT(WriteToolFileAtomically("/dev/null", Bytes("x"), {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is a character device")));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_THAT(WriteToolFileAtomically("", Bytes("x"), {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(Names().empty());
}

TEST_F(ToolIoTest, MissingOutputDirectoryNamesTheOutput) {
  EXPECT_THAT(WriteToolFileAtomically(Path("no/such/out.bin"), Bytes("x"), {}),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr(Path("no/such/out.bin")), HasSubstr("cannot create"),
                             HasSubstr("No such file or directory"))));
  WriteText("file", "x");
  EXPECT_THAT(WriteToolFileAtomically(Path("file/out.bin"), Bytes("x"), {}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("Not a directory")));
  EXPECT_THAT(Names(), ElementsAre("file"));
}

// A write that fails part-way (here: the file size limit, as `ulimit -f` sets it, with
// SIGXFSZ ignored so write(2) fails with EFBIG) removes its temporary file, keeps the
// old output and gives the OS reason.
TEST_F(ToolIoTest, FailedWriteKeepsTheOldOutputAndLeavesNoTemporaryFile) {
  WriteText("out.bin", "old");
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore = {}, saved_action;
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &saved_action), 0);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status =
      WriteToolFileAtomically(Path("out.bin"), std::vector<std::byte>(100000), {});
  const absl::Status empty_ok = WriteToolFileAtomically(Path("small.bin"), Bytes("fits"), {});
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &saved_action, nullptr), 0);

  EXPECT_THAT(status, StatusIs(absl::StatusCode::kResourceExhausted,
                               AllOf(HasSubstr(Path("out.bin")), HasSubstr("write failed after 4096"),
                                     HasSubstr("File too large"))));
  EXPECT_THAT(empty_ok, IsOk());
  EXPECT_EQ(ReadText("out.bin"), "old");
  EXPECT_EQ(ReadText("small.bin"), "fits");
  EXPECT_EQ(Names(), (std::set<std::string>{"out.bin", "small.bin"}));
}

}  // namespace
}  // namespace strata
