/* pin-probe-pthreads: plain POSIX threads (no OpenMP) that say where they ran. Creates N threads one
 * after the other (default 3); each does a little work and notes its CPU. Prints one JSON line with the
 * main thread's CPU first, then each created thread's in creation order. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 64

static void* work(void* arg) {
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x = x * 0.999999 + 1.0;
  *(int*)arg = sched_getcpu();
  return NULL;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  if (n < 0 || n > MAX_THREADS) {
    fprintf(stderr, "pin-probe-pthreads: error: thread count must be 0 to %d\n", MAX_THREADS);
    return 2;
  }
  int cpus[MAX_THREADS + 1];
  pthread_t t[MAX_THREADS];
  for (int i = 0; i < n; ++i)
    if (pthread_create(&t[i], NULL, work, &cpus[i + 1]) != 0) {
      fprintf(stderr, "pin-probe-pthreads: error: pthread_create failed\n");
      return 1;
    }
  work(&cpus[0]);
  for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  printf("{\"probe\":\"pthreads\",\"threads\":%d,\"thread_cpus\":[", n + 1);
  for (int i = 0; i <= n; ++i) printf("%s%d", i ? "," : "", cpus[i]);
  printf("]}\n");
  return 0;
}
