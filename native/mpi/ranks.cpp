#include "mpi/ranks.hpp"
#include "mpi/words.hpp"

#include <algorithm>
#include <cstdio>
#include <new>

#include "common/args.hpp"
#include "common/cpulist.hpp"
#include "common/errors.hpp"
#include "common/isa.hpp"
#include "common/steal.hpp"
#include "common/topology.hpp"

namespace bw::mpi {

namespace {

void say(const char* prog, const char* what) { std::fprintf(stderr, "%s: error: %s\n", prog, what); }

// True when the node-local ranks were given different CPU sets by the launcher.
bool launcher_bound(MPI_Comm local, const std::vector<int>& mine) {
  std::string text = format_cpu_list(mine);
  auto all = gather(json(text), 0, local);
  int bound = 0;
  if (rank(local) == 0)
    bound = std::any_of(all.begin(), all.end(), [&](const json& j) { return j.get<std::string>() != text; });
  MPI_Bcast(&bound, 1, MPI_INT, 0, local);
  return bound != 0;
}

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (int c : a)
    if (std::find(b.begin(), b.end(), c) != b.end()) out.push_back(c);
  return out;
}

// A bad BANDWALL_MAX_ISA on any rank: every rank stops with exit 2 before anything runs, the first
// such rank saying why, so no rank throws later from a parallel region or waits on one that stopped.
bool ceiling_refused(const char* prog) {
  std::string why;
  try {
    isa_ceiling();
  } catch (const UsageError& e) {
    why = e.what();
  }
  const int n = size(), mine = why.empty() ? n : rank();
  int first = n;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first < n && rank() == first) say(prog, why.c_str());
  return first < n;
}

}  // namespace

int guarded_mpi_main(const char* prog, int& argc, char**& argv, const std::function<int()>& body) {
  start_steal_clock();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code = kExitOk;
  try {
    code = ceiling_refused(prog) ? kExitUsage : body();
  } catch (const UsageError& e) {
    if (rank() == 0) say(prog, e.what());
    code = kExitUsage;
  } catch (const SharedRunError& e) {
    if (rank() == 0) say(prog, e.what());
    code = kExitRunFailed;
  } catch (const std::bad_alloc&) {
    say(prog, "out of memory");
    MPI_Abort(MPI_COMM_WORLD, kExitRunFailed);
  } catch (const std::exception& e) {
    say(prog, e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitRunFailed);
  }
  MPI_Finalize();
  return code;
}

int rank(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

int size(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

Local local_ranks() {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &local);
  Local l{rank(local), size(local)};
  MPI_Comm_free(&local);
  return l;
}

bool is_rank_policy(const std::string& policy) {
  for (const Word& w : rank_bindings())
    if (policy == w.name) return true;
  return false;
}

std::vector<int> rank_cpus(const std::string& policy, const std::string& cpus) {
  const auto allowed = allowed_cpus();
  const bool listed = !cpus.empty() || !is_rank_policy(policy);
  std::vector<int> pool;  // every local rank's CPUs, in order: --cpus, or a thread-binding policy's order
  if (!cpus.empty()) {
    pool = resolve_cpu_list(cpus);
    check_cpus_allowed(pool);
  } else if (listed) {
    pool = Topology::instance().order(policy, 0, allowed);  // UsageError for an unknown word
  }
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &local);
  const int lr = rank(local), ln = size(local);
  const bool bound = launcher_bound(local, allowed);
  MPI_Comm_free(&local);
  if (policy == "none" && cpus.empty()) return allowed;
  const Topology& topo = Topology::instance();
  std::vector<int> share;
  if (listed) {
    const std::size_t n = pool.size();
    std::size_t lo = n * static_cast<std::size_t>(lr) / static_cast<std::size_t>(ln);
    std::size_t hi = n * static_cast<std::size_t>(lr + 1) / static_cast<std::size_t>(ln);
    if (hi <= lo) hi = lo + 1;  // more ranks than CPUs: one CPU each, shared evenly
    share.assign(pool.begin() + static_cast<long>(lo), pool.begin() + static_cast<long>(hi));
  } else if (policy == "core") {
    const auto order = topo.order("scatter", 0, allowed);
    share = {order[static_cast<std::size_t>(lr) % order.size()]};
  } else {
    const auto nodes = topo.node_os_indexes();
    const int nn = static_cast<int>(nodes.size());
    const int node = nodes[static_cast<std::size_t>(lr % nn)];
    const auto cpus = intersect(topo.node_cpus(node), allowed);
    // Ranks lr % nn == node index share this node: k-th of m.
    const int k = lr / nn, m = (ln - lr % nn + nn - 1) / nn;
    const std::size_t n = cpus.size();
    std::size_t lo = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(m);
    std::size_t hi = n * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(m);
    if (n == 0) return allowed;
    if (hi <= lo) hi = lo + 1;  // more ranks than CPUs on the node: one CPU each, shared evenly
    share.assign(cpus.begin() + static_cast<long>(lo), cpus.begin() + static_cast<long>(hi));
  }
  if (!bound) return share;
  auto own = intersect(share, allowed);
  return own.empty() ? allowed : own;
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  auto end = s.find_first_of("\n,");
  return s.substr(0, end);
}

std::vector<json> gather(const json& part, int root, MPI_Comm comm) {
  const std::string text = part.dump();
  int len = static_cast<int>(text.size());
  const int n = size(comm), me = rank(comm);
  std::vector<int> lens(static_cast<std::size_t>(n)), offs(static_cast<std::size_t>(n));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, comm);
  std::string all;
  if (me == root) {
    int total = 0;
    for (int i = 0; i < n; ++i) {
      offs[static_cast<std::size_t>(i)] = total;
      total += lens[static_cast<std::size_t>(i)];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR, root, comm);
  std::vector<json> out;
  if (me == root)
    for (int i = 0; i < n; ++i)
      out.push_back(json::parse(all.substr(static_cast<std::size_t>(offs[static_cast<std::size_t>(i)]),
                                           static_cast<std::size_t>(lens[static_cast<std::size_t>(i)]))));
  return out;
}

}  // namespace bw::mpi
