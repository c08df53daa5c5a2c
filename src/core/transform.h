// Transform: rewrites a page in place (cdc_unwrap, rename_fields, drop_fields, filter).
#pragma once

#include "core/page.h"
#include "core/status.h"

namespace faucet {

class Transform {
 public:
  virtual ~Transform() = default;
  // Rewrites `page`. Must keep the page's bookmark. An error stops the pipeline.
  virtual Status Apply(Page& page) = 0;
};

}  // namespace faucet
