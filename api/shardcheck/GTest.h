// GoogleTest assertions over shardcheck (shardcheck/Check.h), for a
// compiler's C++ tests: EXPECT_SHARDING_VERIFIED(text) (and ASSERT_...)
// check the fusion(s) a test printed and fail with check-sharding's full
// output on them: every edge's verdict, the counterexample of a refuted
// one in the fusion's own terms, the lints. Header-only; the test links
// shardcheck::shardcheck and GTest.
//
// This header does not decide anything: verified means check-sharding's
// exit status 0 on the text (TextReport::verified).
#pragma once

#include <shardcheck/Check.h>

#include <gtest/gtest.h>

#include <string>

namespace shardcheck::gtest {

/// The predicate-formatter of EXPECT_SHARDING_VERIFIED.
inline ::testing::AssertionResult shardingVerified(const char *expression,
                                                   const std::string &text) {
  TextReport r = checkText(text);
  if (r.verified())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "shardcheck does not verify " << expression
                                       << " (check-sharding exit status " << r.status << "):\n"
                                       << r.text;
}

} // namespace shardcheck::gtest

/// Checks every fusion of `text`; on failure prints every verdict and the
/// counterexamples.
#define EXPECT_SHARDING_VERIFIED(text)                                                             \
  EXPECT_PRED_FORMAT1(::shardcheck::gtest::shardingVerified, text)
#define ASSERT_SHARDING_VERIFIED(text)                                                             \
  ASSERT_PRED_FORMAT1(::shardcheck::gtest::shardingVerified, text)
