// Candidate lowerings by nvFuser's selection rules (DESIGN section 3).
//
// Two readings of the same rules:
//   - semantic: DIDs on broadcast IDs are ignored (they shard nothing), and a
//     replicated producer feeding a sharded consumer on the same mesh needs
//     no communication. This proposes the checker's own candidate.
//   - nvFuser's: every DID counts, broadcast or not, and a replicated ->
//     sharded edge on one mesh is a Scatter. This reproduces what nvFuser
//     lowers a resharding Set to, which the checker then confirms or refutes.
// A candidate is only a proposal: it counts when EdgeChecker proves it.
#pragma once

#include "checker/Lowering.h"
#include "ir/FusionGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

enum class SelectionReading { Semantic, NvFuser };

struct Selection {
  /// The proposed lowering; nullopt when no single collective applies
  /// (then `reason` says why and `steps` may hold a decomposition).
  std::optional<Lowering> lowering;
  std::string reason;
  std::vector<Lowering> steps;
};

/// Proposes a lowering for an edge.
Selection selectLowering(const Fusion &fusion, const FusionEdge &edge, SelectionReading reading);

/// Whether nvFuser would see the edge as resharding: the meshes differ or
/// some DID (on any ID, broadcast included) sits on different mapped axes.
bool isSyntacticallyResharding(const Fusion &fusion, const FusionEdge &edge);

/// Whether the edge's shardings differ only in spelling: same mesh, and the
/// only differences are DIDs on broadcast IDs (the seed's `bDIDx{1}` vs
/// `b{1}`). Such an edge's lowering is `alias`.
bool differsOnlyInSpelling(const Fusion &fusion, const FusionEdge &edge);

/// The teams of devices that vary only along `didType`'s axis of `mesh`, in
/// row-major order of the other coordinates.
std::vector<Team> teamsAlong(const DeviceMesh &mesh, ParallelType didType);

/// Why nvFuser's runtime cannot run a host IR Communication as printed (a
/// root outside the team, a device listed twice, a SendRecv team of more
/// than two), or why it computes another value than its input stands for
/// (a DTensor collective issued with another reduce op than its partials',
/// kIssuedOpAttr), or nullopt.
std::optional<std::string> communicationRuleViolation(const Expr &expr);

/// The lowering a host IR Communication states, with its team expanded to
/// every parallel team of the mesh when it is one row of it; nullopt for a
/// CollectivePermute (only the ring checker, checker/RingChecker.h, judges
/// one).
std::optional<Lowering> loweringOfCommunication(const Fusion &fusion, const Expr &expr);

} // namespace shardcheck
