// The message of the exception a call throws, for tests that check error texts.
#pragma once
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace doorbell::testing {

// The message of the exception of type E that f throws; a test failure (and "") when it throws nothing.
template <class E = std::invalid_argument, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return "";
}

}  // namespace doorbell::testing
