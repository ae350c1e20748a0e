// bandwall-mpi-pingpong: two ranks bounce messages of growing size (MPI_Send / MPI_Recv) and rank 0
// prints one JSON record: one-way latency and bandwidth per size, the per-rail model the mpiprof
// rail advisor uses. With --ring, N ranks (one a node) measure the links of a ring one at a time,
// rank i with rank i+1: the latency of a small message and the bandwidth of the largest, every
// repetition kept (record mpi-ring). Every received message is checked against the pattern sent.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/args.hpp"
#include "common/errors.hpp"
#include "common/record.hpp"

namespace {

struct Point {
  std::uint64_t bytes;
  long iterations;
  double seconds;  // best round trip
};

void fill(std::vector<unsigned char>& buf, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; i++) buf[i] = static_cast<unsigned char>((i * 131 + seed) & 0xff);
}

bool check(const std::vector<unsigned char>& buf, std::size_t n, unsigned seed) {
  for (std::size_t i = 0; i < n; i++)
    if (buf[i] != static_cast<unsigned char>((i * 131 + seed) & 0xff)) return false;
  return true;
}

// One-way seconds of `iters` round trips of n bytes between this rank and peer (the initiator sends
// first); the buffer is checked after the last trip.
double bounce(std::vector<unsigned char>& buf, std::size_t n, long iters, int peer, bool initiator, unsigned seed,
              bool& ok) {
  fill(buf, n, seed);
  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; i++) {
    if (initiator) {
      MPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  double dt = (MPI_Wtime() - t0) / static_cast<double>(iters) / 2;
  ok = ok && check(buf, n, seed);
  return dt;
}

bw::json spread(const std::vector<double>& v) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  double median = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  return {{"median", median}, {"min", s.front()}, {"max", s.back()}, {"values", v}};
}

// This rank's node: SLURMD_NODENAME inside a Slurm step (several slurmd can share one host), else
// the processor name.
std::string node_name() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, static_cast<std::size_t>(len));
}

constexpr std::size_t kLatencyBytes = 8;
constexpr long kProbe = 4;            // round trips that size a repetition
constexpr double kRepSeconds = 0.05;  // a repetition's length at most, about

// Round trips that fill kRepSeconds at one_way seconds a message, between lo and hi.
long iterations_for(double one_way, long lo, long hi) {
  const double trips = kRepSeconds / std::max(2 * one_way, 1e-9);
  return std::clamp<long>(static_cast<long>(trips), lo, hi);
}

// The initiator's two counts to its peer, so both ends run the same number of round trips.
void share_counts(long counts[2], bool initiator, int peer) {
  if (initiator)
    MPI_Send(counts, 2, MPI_LONG, peer, 1, MPI_COMM_WORLD);
  else
    MPI_Recv(counts, 2, MPI_LONG, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
constexpr int kNameBytes = 256;

// The ring: link i joins rank i and rank (i+1) mod N, measured while every other rank waits.
int ring(int rank, int size, std::uint64_t top, int reps, long max_iters) {
  std::vector<unsigned char> buf(std::max<std::uint64_t>(top, kLatencyBytes));
  const int links = size == 2 ? 1 : size;
  std::vector<double> mine(2 * static_cast<std::size_t>(reps), 0.0);  // latency s, then bandwidth GB/s
  bool ok = true;
  const long big_iters = std::clamp<long>(static_cast<long>((256u << 20) / top), 5L, max_iters);
  for (int link = 0; link < links; link++) {
    const int a = link, b = (link + 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != a && rank != b) continue;
    const int peer = rank == a ? b : a;
    // A short probe sizes each repetition to about kRepSeconds (a slow link, or two ranks taking
    // turns on one CPU, must not hold the ring for minutes); the initiator's count is the pair's.
    long counts[2] = {iterations_for(bounce(buf, kLatencyBytes, kProbe, peer, rank == a, 0, ok), 1L, max_iters),
                      iterations_for(bounce(buf, top, kProbe, peer, rank == a, 0, ok), 1L, big_iters)};
    share_counts(counts, rank == a, peer);
    for (int r = 0; r < reps; r++) {
      double lat = bounce(buf, kLatencyBytes, counts[0], peer, rank == a, static_cast<unsigned>(r), ok);
      double big = bounce(buf, top, counts[1], peer, rank == a, static_cast<unsigned>(r + 7), ok);
      if (rank == a) {
        mine[static_cast<std::size_t>(r)] = lat;
        mine[static_cast<std::size_t>(reps + r)] = static_cast<double>(top) / big * 1e-9;
      }
    }
  }
  std::vector<double> all(rank == 0 ? mine.size() * static_cast<std::size_t>(size) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
             MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::string me = node_name();
  me.resize(kNameBytes, '\0');
  std::vector<char> names(rank == 0 ? static_cast<std::size_t>(kNameBytes) * static_cast<std::size_t>(size) : 0);
  MPI_Gather(me.data(), kNameBytes, MPI_CHAR, names.data(), kNameBytes, MPI_CHAR, 0, MPI_COMM_WORLD);
  int all_ok = 0, mine_ok = ok ? 1 : 0;
  MPI_Reduce(&mine_ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank != 0) return 0;
  if (!all_ok) throw bw::RunError("a received message differs from the one sent");
  auto name_of = [&](int r) { return std::string(names.data() + static_cast<std::ptrdiff_t>(r) * kNameBytes).c_str(); };
  bw::json out = bw::json::array();
  for (int link = 0; link < links; link++) {
    const double* v = all.data() + static_cast<std::ptrdiff_t>(link) * static_cast<std::ptrdiff_t>(mine.size());
    std::vector<double> lat_us, gbps(v + reps, v + 2 * reps);
    for (int r = 0; r < reps; r++) lat_us.push_back(v[r] * 1e6);
    out.push_back({{"from", name_of(link)},
                   {"to", name_of((link + 1) % size)},
                   {"from_rank", link},
                   {"to_rank", (link + 1) % size},
                   {"latency_us", spread(lat_us)},
                   {"bandwidth_GBps", spread(gbps)}});
  }
  bw::json config = {{"ranks", size}, {"latency_bytes", kLatencyBytes}, {"bandwidth_bytes", top}};
  auto prov = bw::provenance(1, {}, "launcher", "none", {{"buffer", top}}, reps);
  bw::emit(bw::make_record(
      "mpi-ring", config, {{"links", out}},
      bw::validation_checked(true, "every received message compared byte by byte with the one sent"), prov));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = bw::guarded_main("bandwall-mpi-pingpong", [&] {
    CLI::App app{"bandwall-mpi-pingpong: latency and bandwidth between two MPI ranks"};
    std::string max_size = "4M";
    int reps = 5;
    long max_iters = 2000;
    app.add_option("--max-size", max_size, "largest message (sizes go 1, 4, 16, ... bytes up to it)");
    app.add_option("--reps", reps, "repetitions of each size (the best is kept)")->check(CLI::PositiveNumber);
    app.add_option("--max-iterations", max_iters, "round trips per repetition at most (fewer for large sizes)")
        ->check(CLI::PositiveNumber);
    bool ring_mode = false;
    app.add_flag("--ring", ring_mode,
                 "every link of a ring of N ranks in turn (rank i with i+1): small-message latency and the "
                 "bandwidth of --max-size, each repetition kept");
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    std::uint64_t top = bw::parse_size(max_size, "--max-size");
    if (top < 1 || top > (1u << 30)) throw bw::UsageError("--max-size must be between 1 and 1G");
    if (ring_mode) {
      if (size < 2) throw bw::UsageError("--ring needs 2 ranks or more, got " + std::to_string(size));
      return ring(rank, size, top, reps, max_iters);
    }
    if (size != 2) throw bw::UsageError("needs exactly 2 ranks, got " + std::to_string(size));
    std::vector<unsigned char> buf(top), expect(top);
    std::vector<Point> points;
    bool ok = true;
    const int peer = 1 - rank;
    for (std::uint64_t n = 1; n <= top; n *= 4) {
      long iters = std::clamp<long>(static_cast<long>((64u << 20) / n), std::min(10L, max_iters), max_iters);
      double best = 1e30;
      for (int r = 0; r < reps; r++) {
        fill(buf, n, static_cast<unsigned>(r));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 0; i < iters; i++) {
          if (rank == 0) {
            MPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf.data(), static_cast<int>(n), MPI_BYTE, peer, 0, MPI_COMM_WORLD);
          }
        }
        double dt = (MPI_Wtime() - t0) / static_cast<double>(iters);
        ok = ok && check(buf, n, static_cast<unsigned>(r));
        best = std::min(best, dt);
      }
      points.push_back({n, iters, best});
    }
    int all_ok = 0, mine = ok ? 1 : 0;
    MPI_Reduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank != 0) return 0;
    if (!all_ok) throw bw::RunError("a received message differs from the one sent");
    bw::json pts = bw::json::array();
    double bw_max = 0;
    for (const auto& p : points) {
      double one_way = p.seconds / 2;
      double gbps = static_cast<double>(p.bytes) / one_way * 1e-9;
      bw_max = std::max(bw_max, gbps);
      pts.push_back(
          {{"bytes", p.bytes}, {"iterations", p.iterations}, {"latency_us", one_way * 1e6}, {"bandwidth_GBps", gbps}});
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    std::string libs(lib, static_cast<std::size_t>(len));
    libs = libs.substr(0, libs.find_first_of("\n,"));
    bw::json result = {{"points", pts},
                       {"latency_us", pts.front()["latency_us"]},
                       {"bandwidth_GBps", bw_max},
                       {"timer_resolution_s", MPI_Wtick()}};
    bw::json config = {{"ranks", size}, {"max_size", top}, {"mpi_library", libs}};
    auto prov = bw::provenance(1, {}, "launcher", "none", {{"buffer", top}}, reps);
    bw::emit(bw::make_record(
        "mpi-pingpong", config, result,
        bw::validation_checked(true, "every received message compared byte by byte with the one sent"), prov));
    return 0;
  });
  MPI_Finalize();
  return rc;
}
