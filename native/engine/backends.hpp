// The backends, one function each, listed once in registry.cpp.
#pragma once
#include "engine/engine.hpp"

namespace bw::engine {

Backend dsa_backend();
Backend dsa_model_backend();
Backend helper_backend();
Backend memcpy_backend();
Backend none_backend();

}  // namespace bw::engine
