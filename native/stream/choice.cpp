// The record of the STREAM variant's choice (common/isa_choice.hpp), apart from kernels.cpp so that
// the pipeline's ThreadSanitizer tests, which build the kernels alone, need no table or cache.
#include "stream/kernels.hpp"

namespace bw::stream {

nlohmann::json isa_choice_json() { return dispatch().choice_json(); }

}  // namespace bw::stream
