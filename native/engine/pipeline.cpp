#include "engine/pipeline.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/errors.hpp"
#include "stream/runner.hpp"
#include "stream/kernels.hpp"

namespace bw::pipeline {
namespace {

double* array(const stream::Arrays& x, char c) { return c == 'a' ? x.a : c == 'b' ? x.b : x.c; }
void set_array(stream::Arrays& x, char c, double* p) { (c == 'a' ? x.a : c == 'b' ? x.b : x.c) = p; }

}  // namespace

std::vector<char> inputs(const stream::Kernel& k) {
  std::vector<char> in;
  for (char c : {'a', 'b', 'c'}) {
    bool used = c == 'a' ? k.uses_a : c == 'b' ? k.uses_b : k.uses_c;
    if (used && c != k.writes) in.push_back(c);
  }
  // Triad reads b (added) and c (scaled): src1 is the added one, as in the seed's triad.
  return in;
}

std::vector<char> engine_inputs(const stream::Kernel& k, Strategy s) {
  std::vector<char> in = inputs(k);
  if (s == Strategy::Split && in.size() > 1) in.erase(in.begin());
  return in;
}

Lane::~Lane() {
  for (double* r : rings) std::free(r);
}

void open_lane(Lane& lane, engine::Engine& e, const Plan& p, int first_queue) {
  const auto ins = engine_inputs(*p.kernel, p.strategy);
  const std::size_t bytes = static_cast<std::size_t>(p.depth) * p.block_elems * sizeof(double);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    lane.queues.push_back(e.open(first_queue + static_cast<int>(i)));
    if (p.kind != engine::Kind::Copy) continue;
    auto* r = static_cast<double*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
    if (!r) throw RunError("cannot allocate the engine's ring of " + std::to_string(bytes) + " bytes");
    std::memset(r, 0, bytes);
    lane.rings.push_back(r);
  }
}

double run_chunk(const Plan& p, const stream::Arrays& x, std::size_t begin, std::size_t end, Lane& lane,
                 LaneTimes* times) {
  const stream::Kernel& k = *p.kernel;
  const stream::ChunkFn fn = p.nt ? k.nt : k.regular;
  const auto eng = engine_inputs(k, p.strategy);
  const std::size_t B = p.block_elems, D = static_cast<std::size_t>(p.depth);
  const bool copy = p.kind == engine::Kind::Copy;

  // The head up to the vector alignment of the array that aligns the kernel (the written one, or
  // a for dot) is computed directly, so every block starts where the CPU-only kernel's vectors do.
  const double* al = array(x, k.writes ? k.writes : 'a');
  std::size_t h = begin;
  const std::uintptr_t vec_bytes = static_cast<std::uintptr_t>(stream::vector_bits() / 8);
  while (h < end && reinterpret_cast<std::uintptr_t>(al + h) % vec_bytes != 0) ++h;
  // The dot of the active stream variant, in its own order of operations (stream/kernels.hpp).
  const stream::DotSteps& dot = stream::dot_steps();
  stream::DotState sum;
  if (h > begin) {
    if (k.writes)
      fn(x, begin, h, stream::kScalar);
    else
      dot.scalar(sum, x.a + begin, x.b + begin, h - begin);
  }
  const std::size_t nblocks = (end - h + B - 1) / B;
  auto first = [&](std::size_t b) { return h + b * B; };
  auto length = [&](std::size_t b) { return std::min(B, end - first(b)); };

  // Block b over the arrays as they are, or with the engine's inputs read from ring slot b % D.
  auto compute = [&](std::size_t b, bool from_ring) {
    const std::size_t i0 = first(b), n = length(b);
    stream::Arrays y{x.a ? x.a + i0 : nullptr, x.b ? x.b + i0 : nullptr, x.c ? x.c + i0 : nullptr};
    if (from_ring && copy)
      for (std::size_t e = 0; e < eng.size(); ++e) set_array(y, eng[e], lane.rings[e] + (b % D) * B);
    if (k.writes)
      fn(y, 0, n, stream::kScalar);
    else
      dot.body(sum, y.a, y.b, n, b + 1 == nblocks);
  };
  std::vector<engine::Ticket> tickets(eng.size() * D);
  auto submit = [&](std::size_t b) {
    for (std::size_t e = 0; e < eng.size(); ++e) {
      engine::Request r;
      r.kind = p.kind;
      r.src = array(x, eng[e]) + first(b);
      r.dst = copy ? lane.rings[e] + (b % D) * B : nullptr;
      r.bytes = length(b) * sizeof(double);
      tickets[e * D + b % D] = lane.queues[e]->submit(r);
    }
  };

  // As the seed: the thread computes the first depth blocks from memory while the engine fetches
  // the next depth; then it waits for block b, computes it and submits block b + depth.
  const std::size_t direct = std::min(D, nblocks);
  for (std::size_t b = direct; b < std::min(direct + D, nblocks); ++b) submit(b);
  for (std::size_t b = 0; b < direct; ++b) compute(b, false);
  for (std::size_t b = direct; b < nblocks; ++b) {
    for (std::size_t e = 0; e < eng.size(); ++e) lane.queues[e]->wait(tickets[e * D + b % D]);
    compute(b, true);
    if (b + D < nblocks) submit(b + D);
  }
  if (times) {
    times->blocks += nblocks;
    times->direct_blocks += direct;
  }
  return k.writes ? 0.0 : dot.total(sum);
}

}  // namespace bw::pipeline
