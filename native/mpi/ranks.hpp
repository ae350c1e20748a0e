// What every bandwall MPI tool shares: MPI start and end, errors across ranks, where each rank's
// threads run, and gathering the ranks' parts of a record on rank 0.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/record.hpp"

namespace bw::mpi {

// A run failure every rank reaches together (a failed validation decided on rank 0 and
// broadcast): rank 0 prints it, every rank finalises and exits 1. Any other RunError is one
// rank's own: that rank prints it and aborts the job.
struct SharedRunError : RunError {
  using RunError::RunError;
};

// MPI_Init_thread (funneled), body, MPI_Finalize. UsageError (thrown by every rank alike, before
// any communication) and SharedRunError print one line from rank 0 and exit 2 or 1 on every rank.
int guarded_mpi_main(const char* prog, int& argc, char**& argv, const std::function<int()>& body);

int rank(MPI_Comm comm = MPI_COMM_WORLD);
int size(MPI_Comm comm = MPI_COMM_WORLD);

// The ranks sharing this rank's node (MPI_COMM_TYPE_SHARED): this rank's index among them and
// their number.
struct Local {
  int rank = 0, size = 1;
};
Local local_ranks();

// The CPUs a rank's threads run on.
//  numa: the node-local ranks are dealt round-robin to the NUMA nodes; the ranks that share a node
//        share its CPUs, each taking a contiguous part (at least one CPU);
//  core: one CPU per rank, node-local ranks scattered over the NUMA nodes (seed 003's flat MPI);
//  none: every CPU the rank may use.
// When the launcher already bound the ranks to different CPUs (srun's task/affinity, mpirun
// --bind-to), the rank keeps its own CPUs (those of its share of the node when they overlap).
// Throws UsageError for another word.
// With a CPU list (cpus, common/cpulist.hpp) or a thread-binding policy of the table
// (common/policies.hpp: compact, scatter, spread, node:N) instead, that list (or the policy's order
// of the allowed CPUs) is the CPUs of all the ranks on the node: the node-local ranks divide it
// into contiguous parts in rank order (rank k of m takes the k-th; at least one CPU each).
std::vector<int> rank_cpus(const std::string& policy, const std::string& cpus = "");

// Whether policy is one of the rank bindings (mpi/words.hpp) rather than a thread-binding policy.
bool is_rank_policy(const std::string& policy);

// The MPI library's own version line (MPI_Get_library_version, first line).
std::string library_version();

// Every rank's part, in rank order, on root (empty on the other ranks).
std::vector<json> gather(const json& part, int root = 0, MPI_Comm comm = MPI_COMM_WORLD);

}  // namespace bw::mpi
