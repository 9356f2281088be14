// remeshFusion: rewrites a fusion built for a 1-D mesh {0 .. D-1} so that it
// runs on n devices {0 .. n-1}, for the device-count sweep of
// tests/plan_corpus_test.cpp (every corpus fusion proved and run with 1, 2,
// 3, 4 and 8 devices where its meshes allow).
//
// It is a test utility, not part of shardcheck: it decides nothing about
// sharding and never fixes up a fusion it does not understand. The rules are
// in tests/Remesh.cpp's banner; in short, every axis sharded over the D
// devices is rescaled so that each device keeps the same local extent, and
// everything else is copied unchanged.
#pragma once

#include "ir/Fusion.h"

#include <cstdint>
#include <optional>
#include <string>

namespace shardcheck::testutil {

/// The fusion `f` moved from its 1-D mesh {0 .. D-1} to {0 .. n-1}, or
/// nullopt when the rewrite does not apply (the reason goes to `whyNot` when
/// it is not null). Remeshing onto n == D gives back `f` unchanged.
std::optional<Fusion> remeshFusion(const Fusion &f, int64_t n, std::string *whyNot);

/// The device count D of the fusion's multi-device mesh {0 .. D-1}, if every
/// multi-device mesh of `f` is that one 1-D mesh; nullopt otherwise.
std::optional<int64_t> linearMeshSize(const Fusion &f);

} // namespace shardcheck::testutil
