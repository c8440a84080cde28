// The compiled-object cache on disk: a second compile of the same source reads the object instead of running the
// compiler; anything that changes the bytes changes the entry; a damaged entry is recompiled; off means off.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/object_cache.h"
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
  void TearDown() override { set_object_cache_dir(saved_); }
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

}  // namespace
}  // namespace doorbell
