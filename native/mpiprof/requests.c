/* Persistent point-to-point requests of libbandwall-mpiprof: MPI_Send_init and its kin record what
 * each start of the request will send or receive in the calling thread's fixed table; MPI_Start and
 * MPI_Startall count every request they start as one message of its init's row (bytes, size,
 * partner); MPI_Request_free forgets it. A start the table does not know (table full, request made
 * on another thread, persistent collective) is counted in unattributed_starts. */
#include "mpiprof.h"

static int find(const bwp_thread* t, MPI_Request req) {
  for (int i = 0; i < t->nreqs; i++)
    if (t->reqs[i].req == req) return i;
  return -1;
}

void bwp_persist(bwp_thread* t, int call, MPI_Request req, int slot, int peer, uint64_t bytes, int recv) {
  int i = find(t, req);
  if (i < 0) {
    if (t->nreqs == BWP_MAXREQS) return; /* its starts will be unattributed */
    i = t->nreqs++;
  }
  bwp_persistent e = {req, bytes, call, slot, peer, recv};
  t->reqs[i] = e;
}

void bwp_unpersist(bwp_thread* t, MPI_Request req) {
  int i = find(t, req);
  if (i >= 0) t->reqs[i] = t->reqs[--t->nreqs];
}

void bwp_start(bwp_thread* t, const MPI_Request* reqs, int n, uint64_t ticks) {
  if (!reqs || n <= 0) return;
  uint64_t lat = ticks / (uint64_t)n; /* each request's share of the start call */
  for (int k = 0; k < n; k++) {
    int i = find(t, reqs[k]);
    if (i < 0) {
      t->unattributed_starts++;
      continue;
    }
    const bwp_persistent* e = &t->reqs[i];
    bwp_count_message(t, e->call, e->slot, e->bytes, lat);
    if (e->recv)
      bwp_received(t, e->slot, e->peer, e->bytes);
    else
      bwp_sent(t, e->slot, e->peer, e->bytes);
  }
}
