// The logical type of a Postgres column, from its type OID.
#pragma once

#include <cstdint>

#include "core/change.h"

namespace faucet::postgres {

// Builtin scalar types map to their ValueType and builtin array types (OIDs below 10000, the
// first OID user objects get) to kArray; everything else — enums, domains, composites, ranges,
// extension types — is kOther and keeps its text form. A domain arrives under its own OID (the
// pgoutput Relation message names the column's declared type), so it is kOther too.
ValueType ValueTypeForOid(uint32_t oid);

}  // namespace faucet::postgres
