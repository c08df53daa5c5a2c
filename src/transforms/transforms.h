// The transforms a config can list under pipeline.transforms. Each factory validates its
// config with no I/O; errors name the file, line and key.
//
//   cdc_unwrap     CDC envelope -> flat row plus a marker column ("d" delete, "u" otherwise),
//                  the shape an upsert sink with delete_marker {field: __op, values: [d]} takes.
//                  Beyond the reference: an update that changes the key emits a delete of the
//                  old key first, so the old row does not survive in the destination.
//   rename_fields  {fields: {old: new, ...}}
//   drop_fields    {fields: [name, ...]}
//   filter         {path, op: eq|ne|exists|in|not_in, value}: keeps the changes that match.
#pragma once

#include <memory>

#include "config/document.h"
#include "core/transform.h"

namespace faucet {

Result<std::unique_ptr<Transform>> MakeCdcUnwrap(const config::ConnectorSpec& spec);
Result<std::unique_ptr<Transform>> MakeRenameFields(const config::ConnectorSpec& spec);
Result<std::unique_ptr<Transform>> MakeDropFields(const config::ConnectorSpec& spec);
Result<std::unique_ptr<Transform>> MakeFilter(const config::ConnectorSpec& spec);

}  // namespace faucet
