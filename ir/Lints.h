// Well-formedness lints of a fusion's sharding annotations (DESIGN section 3).
//
// Each finding is a located Diagnostic with a stable code:
//   duplicate-did         two non-broadcast loop IDs on one DID type (error),
//                         or several broadcast ones (error, with a note that
//                         the data itself is unaffected: nvFuser rejects the
//                         loop domain at run time)
//   did-on-inner-split    a DID on the inner output of a split (error)
//   did-extent-mismatch   a DID's extent differs from the mesh size along its
//                         axis (error)
//   did-not-in-mesh       a DID type the tensor's mesh has no axis for (error)
//   did-without-mesh      a DID on a tensor that has no mesh (error)
//   mesh-duplicate-device a mesh lists a device twice (error)
//   uneven-sharding       a device split that does not divide its extent
//                         (warning, with per-device counts)
// DIDs on broadcast IDs are vacuous (they shard nothing), so only the
// duplicate-did lint looks at them.
// Lints do not decide communication; the checker does.
#pragma once

#include "ir/Fusion.h"

namespace shardcheck {

/// Runs every lint over one fusion, appending findings to `diags`.
void lintFusion(const Fusion &fusion, DiagnosticEngine &diags);

} // namespace shardcheck
