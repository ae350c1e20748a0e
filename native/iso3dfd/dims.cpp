// The grid's dimensions and the stencil's radius as the command lines of bandwall-iso3dfd and
// bandwall-iso3dfd-mpi take them.
#include <string>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "iso3dfd/iso3dfd.hpp"

namespace bw::iso3dfd {

std::size_t parse_dimension(const std::string& text, const char* name, int radius) {
  const long v = parse_int(text, name, 0, kMaxDim);
  if (v < static_cast<long>(min_dim(radius)))
    throw UsageError(std::string(name) + " '" + text + "' is below the minimum " + std::to_string(min_dim(radius)) +
                     " at radius " + std::to_string(radius) + " (2R+1: the halo of " + std::to_string(radius) +
                     " on each side and one interior point)");
  return static_cast<std::size_t>(v);
}

std::string radius_help() {
  std::string compiled;
  for (std::size_t i = 0; i < kKernelRadii.size(); ++i)
    compiled += (i == 0 ? "" : i + 1 == kKernelRadii.size() ? " and " : ", ") + std::to_string(kKernelRadii[i]);
  const bool every = kKernelRadii.size() == static_cast<std::size_t>(kMaxRadius);
  return "the stencil's radius R, 1 to " + std::to_string(kMaxRadius) + " (space order 2R; default " +
         std::to_string(kSeedRadius) + ", the article's " + std::to_string(2 * kSeedRadius) +
         "th order): its halo on each side of the grid, and its exact central-difference weights (the article's own "
         "at " +
         std::to_string(kSeedRadius) + "); " +
         (every ? std::string("the vector kernels are compiled for every radius")
                : "the vector kernels are compiled for " + compiled + ", other radii run the generic loops") +
         " (rows too short for whole vectors run the generic loops)";
}

std::size_t padded_pitch(std::size_t n1) {
  constexpr std::size_t kLine = 16;  // floats a 64-byte line holds
  std::size_t lines = (n1 + kLine - 1) / kLine;
  if (lines % 2 == 0) ++lines;
  return lines * kLine;
}

std::size_t parse_row_pitch(const std::string& text, std::size_t n1) {
  if (text == "auto") return padded_pitch(n1);
  if (text == "packed") return n1;
  long v = 0;
  try {
    v = parse_int(text, "--row-pitch", 1, kMaxDim + 64);
  } catch (const UsageError&) {
    throw UsageError("--row-pitch '" + text + "' must be auto, packed or a number of floats from n1 (" +
                     std::to_string(n1) + ") up");
  }
  if (static_cast<std::size_t>(v) < n1)
    throw UsageError("--row-pitch " + text + " is below n1 (" + std::to_string(n1) + "): a row must hold its floats");
  return static_cast<std::size_t>(v);
}

std::size_t line_lead(std::size_t pitch, int radius) {
  constexpr std::size_t kLine = 16;  // floats a 64-byte line holds
  const std::size_t r = static_cast<std::size_t>(radius) % kLine;
  return pitch % kLine == 0 ? (kLine - r) % kLine : 0;
}

std::size_t padded_plane(std::size_t pitch, std::size_t n2) {
  constexpr std::size_t kLine = 16;  // floats a 64-byte line holds
  std::size_t lines = (pitch * n2 + kLine - 1) / kLine;
  if (lines % 2 == 0) ++lines;
  return lines * kLine;
}

std::size_t parse_array_offset(const std::string& text) {
  if (text == "auto") return kArrayOffset;
  long v = -1;
  try {
    v = parse_int(text, "--array-offset", 0, 1008);
  } catch (const UsageError&) {
  }
  if (v < 0 || v % 16 != 0)
    throw UsageError("--array-offset '" + text +
                     "' must be auto or a number of floats from 0 to 1008, a multiple of 16 " +
                     "(whole 64-byte lines)");
  return static_cast<std::size_t>(v);
}

std::size_t parse_plane_pitch(const std::string& text, std::size_t pitch, std::size_t n2) {
  if (text == "auto") return padded_plane(pitch, n2);
  const std::size_t packed = pitch * n2;
  if (text == "packed") return packed;
  long v = 0;
  try {
    v = parse_int(text, "--plane-pitch", 1, static_cast<long>(packed) + 1024 * 1024);
  } catch (const UsageError&) {
    throw UsageError("--plane-pitch '" + text +
                     "' must be auto, packed or a number of floats from the row pitch x n2 (" + std::to_string(packed) +
                     ") up");
  }
  if (static_cast<std::size_t>(v) < packed)
    throw UsageError("--plane-pitch " + text + " is below the row pitch x n2 (" + std::to_string(packed) +
                     "): a plane must hold its rows");
  return static_cast<std::size_t>(v);
}

int parse_radius(const std::string& text) {
  try {
    return static_cast<int>(parse_int(text, "--radius", 1, kMaxRadius));
  } catch (const UsageError&) {
    throw UsageError("--radius '" + text + "' must be a whole number from 1 to " + std::to_string(kMaxRadius) +
                     " (the stencil's half width: space order 2 to " + std::to_string(2 * kMaxRadius) + ")");
  }
}

}  // namespace bw::iso3dfd
