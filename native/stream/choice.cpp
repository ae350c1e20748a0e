// The choice of the STREAM variant by speed (common/isa_choice.hpp), apart from kernels.cpp so
// that the pipeline's ThreadSanitizer tests, which build the kernels alone, need no table or cache.
#include "stream/kernels.hpp"

namespace bw::stream {

std::string choose_isa(const std::string& isa, std::string_view name, const std::string& stores,
                       const std::function<double(const Variant&)>& measure) {
  // dot stores nothing: one entry whatever the store kind
  const std::string key = "stream." + std::string(name) + (find_kernel(name).writes ? "." + stores : "");
  return dispatch().choose(isa, key, measure, "GB/s").isa;
}

nlohmann::json isa_choice_json() { return dispatch().choice_json(); }

}  // namespace bw::stream
