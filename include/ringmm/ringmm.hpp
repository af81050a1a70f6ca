// ringmm: dense matrix multiplication over semirings. Include this one header.
#pragma once

#include "ringmm/bits.hpp"
#include "ringmm/context.hpp"
#include "ringmm/contract.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/error.hpp"
#include "ringmm/backward.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/narrow.hpp"
#include "ringmm/semiring.hpp"
#include "ringmm/types.hpp"
