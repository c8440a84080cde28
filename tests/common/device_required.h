#pragma once
// DOORBELL_REQUIRE_DEVICE("nv") or ("amd") at the top of a test that needs real hardware: where the hardware is
// absent the test is skipped with a message naming what is missing. Register such tests with the labels
// `device` and `nv` or `amd`.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace doorbell::testing {

// Why the device of `kind` cannot be used here, or nothing when it is present. `root` is "/" except in tests of
// this helper.
inline std::optional<std::string> missing_device(std::string_view kind,
                                                 const std::filesystem::path& root = "/") {
  std::error_code error;
  if (kind == "nv") {
    if (!std::filesystem::exists(root / "dev/nvidiactl", error)) {
      return "no NVIDIA GPU: /dev/nvidiactl absent; this test needs real hardware";
    }
    return std::nullopt;
  }
  if (kind == "amd") {
    if (!std::filesystem::exists(root / "dev/kfd", error)) {
      return "no AMD GPU: /dev/kfd absent; this test needs real hardware";
    }
    return std::nullopt;
  }
  return "unknown device kind '" + std::string(kind) + "'; expected \"nv\" or \"amd\"";
}

inline bool is_known_device_kind(std::string_view kind) { return kind == "nv" || kind == "amd"; }

}  // namespace doorbell::testing

// A misspelled kind fails the test rather than skipping it, so it cannot hide.
#define DOORBELL_REQUIRE_DEVICE(kind)                                                            \
  do {                                                                                           \
    if (auto doorbell_missing_ = ::doorbell::testing::missing_device(kind)) {                    \
      if (!::doorbell::testing::is_known_device_kind(kind)) FAIL() << *doorbell_missing_;        \
      GTEST_SKIP() << *doorbell_missing_;                                                        \
    }                                                                                            \
  } while (0)
