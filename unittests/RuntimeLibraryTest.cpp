// RuntimeLibraryTest.cpp - product constraints on libv4f_runtime.so: dependencies and size.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string runCommand(const std::string &command) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) return output;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe)) output += buf;
  pclose(pipe);
  return output;
}

TEST(RuntimeLibrary, DependsOnlyOnTheCLibraryFamily) {
  std::string out = runCommand(std::string(V4F_READELF_PATH) + " -d " V4F_RUNTIME_LIBRARY_PATH);
  ASSERT_NE(out.find("NEEDED"), std::string::npos) << out;
  const std::set<std::string> allowed = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
                                         "ld-linux-x86-64.so.2"};
  size_t pos = 0;
  while ((pos = out.find("Shared library: [", pos)) != std::string::npos) {
    pos += 17;
    std::string lib = out.substr(pos, out.find(']', pos) - pos);
    if (V4F_SANITIZED && lib.find("san") != std::string::npos) continue;
    EXPECT_TRUE(allowed.count(lib)) << "unexpected dependency " << lib;
  }
}

TEST(RuntimeLibrary, StrippedSizeUnder300KB) {
  if (V4F_SANITIZED) GTEST_SKIP() << "sanitizer builds are not size-representative";
  std::string copy = ::testing::TempDir() + "libv4f_runtime.stripped." + std::to_string(getpid());
  std::string cmd = std::string(V4F_STRIP_PATH) + " -o " + copy + " " V4F_RUNTIME_LIBRARY_PATH;
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
  struct stat st;
  ASSERT_EQ(stat(copy.c_str(), &st), 0);
  printf("[runtime] stripped size: %lld bytes\n", static_cast<long long>(st.st_size));
  EXPECT_LT(st.st_size, 300 * 1024);
  unlink(copy.c_str());
}

} // namespace
