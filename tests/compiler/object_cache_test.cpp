// The compiled-object cache on disk: a second compile of the same source reads the object instead of running the
// compiler; anything that changes the bytes changes the entry; a damaged entry is recompiled; off means off.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/object_cache.h"
#include "ir/debug.h"
#include "tests/common/temp_tree.h"

namespace doorbell {
namespace {

constexpr const char* kSource = "int object_cache_probe(int x) { return 3 * x + 1; }\n";

// Points the cache at a fresh directory for one test and restores the setting after it.
class ObjectCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH";
    saved_ = object_cache_dir();
    set_object_cache_dir((tree_.root() / "kernels").string());
  }
  void TearDown() override {
    set_object_cache_owner(std::nullopt);
    set_object_cache_dir(saved_);
  }
  std::filesystem::path dir() const { return tree_.root() / "kernels"; }
  std::filesystem::path entry(const CompiledObject& o) const { return dir() / (c_object_cache_key(kSource, o.compiler) + ".o"); }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  }
  static void write(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  // What compiling kSource twice at DEBUG=1 writes to stderr (a report must appear once, not per compile).
  static std::string stderr_of_two_compiles_at_debug1() {
    const int saved = debug_level();
    set_debug_level(1);
    ::testing::internal::CaptureStderr();
    compile_c(kSource);
    compile_c(kSource);
    std::string err = ::testing::internal::GetCapturedStderr();
    set_debug_level(saved);
    return err;
  }
  static mode_t mode_of(const std::filesystem::path& p) {
    struct stat st{};
    EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
  }
  // A second compile must recompile (the entry was refused), give the compiler's object, and leave a good entry.
  void expect_recompiled_and_replaced(const CompiledObject& first) {
    CompiledObject again = compile_c(kSource);
    EXPECT_FALSE(again.from_disk_cache);
    EXPECT_EQ(again.object, first.object);
    EXPECT_TRUE(S_ISREG(mode_of(entry(first))));
    CompiledObject third = compile_c(kSource);
    EXPECT_TRUE(third.from_disk_cache);
    EXPECT_EQ(third.object, first.object);
  }
  size_t entries() const {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(tree_.root() / "kernels", ec)) n += e.path().extension() == ".o";
    return n;
  }
  testing::TempTree tree_;
  std::optional<std::string> saved_;
};

TEST_F(ObjectCache, SecondCompileOfTheSameSourceReadsTheObjectFromDisk) {
  CompiledObject first = compile_c(kSource);
  EXPECT_FALSE(first.from_disk_cache);
  EXPECT_EQ(entries(), 1u);
  CompiledObject second = compile_c(kSource);
  EXPECT_TRUE(second.from_disk_cache);
  EXPECT_EQ(second.object, first.object);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ObjectCache, ADifferentSourceIsADifferentEntry) {
  compile_c(kSource);
  CompiledObject other = compile_c(std::string(kSource) + "int object_cache_other(void) { return 7; }\n");
  EXPECT_FALSE(other.from_disk_cache);
  EXPECT_EQ(entries(), 2u);
  EXPECT_NE(object_cache_key(kSource, "/usr/bin/cc", "-O2"), object_cache_key(kSource, "/usr/bin/cc", "-O3"));
  EXPECT_NE(object_cache_key(kSource, "/usr/bin/cc", "-O2"), object_cache_key(kSource, "/usr/bin/clang", "-O2"));
}

TEST_F(ObjectCache, ADamagedEntryIsIgnoredAndReplacedByARecompile) {
  CompiledObject first = compile_c(kSource);
  std::string key = c_object_cache_key(kSource, first.compiler);
  tree_.write("kernels/" + key + ".o", "not an object");
  CompiledObject again = compile_c(kSource);
  EXPECT_FALSE(again.from_disk_cache);
  EXPECT_EQ(again.object.substr(0, 4), "\x7f" "ELF");
  EXPECT_TRUE(compile_c(kSource).from_disk_cache);  // the recompile replaced the damaged entry
}

TEST_F(ObjectCache, SwitchedOffItNeitherReadsNorWrites) {
  set_object_cache_dir(std::nullopt);
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(ObjectCache, AnUnwritableDirectoryOnlyCostsTheCache) {
  tree_.write("file", "x");
  set_object_cache_dir((tree_.root() / "file" / "kernels").string());  // under a regular file: cannot be created
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
}

// Issue 14: the temporary file had a predictable name (.KEY.PID.N.tmp) and was opened following symlinks, so a
// symlink planted there made a victim file be overwritten.
TEST_F(ObjectCache, ASymlinkPlantedAtAPredictableTemporaryPathIsNeverFollowed) {
  const std::string key = c_object_cache_key(kSource, *find_c_compiler());
  tree_.write("victim", "victim");
  std::filesystem::create_directories(dir());
  for (int n = 0; n < 2000; n++)
    std::filesystem::create_symlink(tree_.root() / "victim", dir() / ("." + key + "." + std::to_string(getpid()) + "." + std::to_string(n) + ".tmp"));
  CompiledObject first = compile_c(kSource);
  EXPECT_EQ(read(tree_.root() / "victim"), "victim");
  EXPECT_TRUE(S_ISREG(mode_of(entry(first))));
  EXPECT_TRUE(compile_c(kSource).from_disk_cache);
}

TEST_F(ObjectCache, ASymlinkAtAnEntryPathIsDeletedNotFollowed) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::rename(entry(first), tree_.root() / "victim");  // a good entry, reached through a link
  const std::string victim = read(tree_.root() / "victim");
  std::filesystem::create_symlink(tree_.root() / "victim", entry(first));
  expect_recompiled_and_replaced(first);
  EXPECT_EQ(read(tree_.root() / "victim"), victim);
}

TEST_F(ObjectCache, UnderUmask000TheDirectoryIs0700AndEntriesAre0600) {
  const mode_t saved = umask(0);
  CompiledObject first = compile_c(kSource);
  umask(saved);
  EXPECT_EQ(mode_of(dir()) & 07777, 0700u);
  EXPECT_EQ(mode_of(entry(first)) & 07777, 0600u);
}

TEST_F(ObjectCache, ADirectoryWritableByOthersIsRefusedAndNeverUsed) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::permissions(dir(), std::filesystem::perms::all);  // 0777: anyone could have planted the entry
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  ASSERT_TRUE(object_cache_refusal().has_value());
  EXPECT_NE(object_cache_refusal()->find("0777"), std::string::npos) << *object_cache_refusal();
  std::filesystem::remove(entry(first));
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  EXPECT_FALSE(std::filesystem::exists(entry(first))) << "nothing is written to a refused directory";
}

TEST_F(ObjectCache, ADirectoryOwnedByAnotherUserIsRefused) {
  compile_c(kSource);
  set_object_cache_owner(geteuid() + 1);  // as if the directory were someone else's
  EXPECT_FALSE(compile_c(kSource).from_disk_cache);
  ASSERT_TRUE(object_cache_refusal().has_value());
  EXPECT_NE(object_cache_refusal()->find("owned by uid " + std::to_string(geteuid())), std::string::npos) << *object_cache_refusal();
  set_object_cache_owner(std::nullopt);
  EXPECT_TRUE(compile_c(kSource).from_disk_cache);
  EXPECT_FALSE(object_cache_refusal().has_value());
}

TEST_F(ObjectCache, AnEntryOwnedByAnotherUserIsDeletedAndRecompiled) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  CompiledObject first = compile_c(kSource);
  ASSERT_EQ(chown(entry(first).c_str(), 65534, 65534), 0);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, AnEntryWritableByOthersIsDeletedAndRecompiled) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::permissions(entry(first), std::filesystem::perms::all);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, ATruncatedEntryIsDeletedAndRecompiled) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::resize_file(entry(first), std::filesystem::file_size(entry(first)) - first.object.size() / 2);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, ABitFlipInAnEntryIsDetectedBeforeLoading) {
  CompiledObject first = compile_c(kSource);
  std::string bytes = read(entry(first));
  bytes[bytes.size() - first.object.size() / 2] ^= 0x10;
  write(entry(first), bytes);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, AnotherKernelsEntryPlantedUnderThisKeyIsRejected) {
  CompiledObject first = compile_c(kSource);
  const std::string other_source = "int object_cache_planted(void) { return 42; }\n";
  compile_c(other_source);
  std::filesystem::copy_file(dir() / (c_object_cache_key(other_source, first.compiler) + ".o"), entry(first),
                             std::filesystem::copy_options::overwrite_existing);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, AFifoAtAnEntryPathDoesNotHangTheProcess) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::remove(entry(first));
  ASSERT_EQ(mkfifo(entry(first).c_str(), 0600), 0);
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, AnEntryLargerThanTheBoundIsNotRead) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::resize_file(entry(first), kObjectCacheMaxEntryBytes + 1);  // sparse: costs no disk
  expect_recompiled_and_replaced(first);
}

TEST_F(ObjectCache, ABadEntryIsReportedOnceAtDebug1) {
  CompiledObject first = compile_c(kSource);
  std::filesystem::resize_file(entry(first), 10);
  const std::string err = stderr_of_two_compiles_at_debug1();
  const std::string name = entry(first).filename().string();
  ASSERT_NE(err.find(name), std::string::npos) << err;
  EXPECT_EQ(err.find(name, err.find(name) + 1), std::string::npos) << "reported more than once:\n" << err;
  EXPECT_NE(err.find("deleted, recompiling"), std::string::npos) << err;
}

TEST_F(ObjectCache, ARefusedDirectoryIsReportedOnceAtDebug1) {
  compile_c(kSource);
  std::filesystem::permissions(dir(), std::filesystem::perms::all);
  const std::string err = stderr_of_two_compiles_at_debug1();
  const std::string line = "not using " + dir().string();
  ASSERT_NE(err.find(line), std::string::npos) << err;
  EXPECT_EQ(err.find(line, err.find(line) + 1), std::string::npos) << "reported more than once:\n" << err;
}

}  // namespace
}  // namespace doorbell
