// bandwall-mpi-pingpong: two ranks bounce messages of growing size (MPI_Send / MPI_Recv) and rank 0
// prints one JSON record: one-way latency and bandwidth per size, the per-rail model the mpiprof
// rail advisor uses. Every received message is checked against the pattern that was sent.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
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
    if (!bw::parse_command_line(app, argc, argv)) return 0;
    if (size != 2) throw bw::UsageError("needs exactly 2 ranks, got " + std::to_string(size));
    std::uint64_t top = bw::parse_size(max_size, "--max-size");
    if (top < 1 || top > (1u << 30)) throw bw::UsageError("--max-size must be between 1 and 1G");
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
