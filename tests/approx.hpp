#pragma once

#include <doctest/doctest.h>

namespace ccsim::test {

// doctest::Approx passes when |a - b| < epsilon x (scale + max(|a|, |b|)), with a scale of 1 by
// default: for values far below 1 (seconds, seconds per byte, fractions) that is an absolute
// tolerance of epsilon, which any such value meets. Tests here compare relatively (scale 0).
inline doctest::Approx approx(double value) { return doctest::Approx(value).scale(0); }

}  // namespace ccsim::test
