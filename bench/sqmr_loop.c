/*
 * The bare windowed Irecv/Isend/Waitall loop of sqmr, written directly in C, to measure
 * what sqmr's own code costs on top of the MPI library. Same topology, schedule, warm-up,
 * barriers and counting as sqmr; prints "msgsize iters avg_msgs_per_sec" per size.
 * Usage: sqmr_loop NUM_CORES NUM_NBORS NUM_ITERS WIN_SIZE MIN MAX
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 7) {
    if (rank == 0) fprintf(stderr, "usage: sqmr_loop CORES NBORS ITERS WIN MIN MAX\n");
    MPI_Finalize();
    return 2;
  }
  long cores = atol(argv[1]), nbors = atol(argv[2]), iters = atol(argv[3]);
  long win = atol(argv[4]), min = atol(argv[5]), max = atol(argv[6]);
  if (cores * (1 + nbors) != size) {
    if (rank == 0) fprintf(stderr, "need %ld ranks\n", cores * (1 + nbors));
    MPI_Finalize();
    return 2;
  }
  int is_core = rank < cores;
  int npeers = is_core ? (int)nbors : 1;
  int *peers = malloc(sizeof(int) * npeers);
  for (int k = 0; k < npeers; k++)
    peers[k] = is_core ? (int)(cores + rank * nbors + k) : (int)((rank - cores) / nbors);
  int slots = (int)(win * npeers);
  MPI_Request *sreq = malloc(sizeof(MPI_Request) * slots);
  MPI_Request *rreq = malloc(sizeof(MPI_Request) * slots);
  char *sbuf, *rbuf;
  posix_memalign((void **)&sbuf, 4096, max > 0 ? max : 1);
  posix_memalign((void **)&rbuf, 4096, max > 0 ? max : 1);
  memset(sbuf, 0, max > 0 ? max : 1);
  memset(rbuf, 0, max > 0 ? max : 1);
  MPI_Comm core_comm;
  MPI_Comm_split(MPI_COMM_WORLD, is_core ? 0 : 1, rank, &core_comm);

  for (long msg = min; msg <= max; msg = msg == 0 ? 1 : msg * 2) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = 0.0;
    for (long it = 0; it < 10 + iters; it++) {
      if (it == 10) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (is_core) start = MPI_Wtime();
      }
      int s = 0;
      for (long w = 0; w < win; w++)
        for (int k = 0; k < npeers; k++, s++) {
          MPI_Irecv(rbuf, (int)msg, MPI_BYTE, peers[k], 1, MPI_COMM_WORLD, &rreq[s]);
          MPI_Isend(sbuf, (int)msg, MPI_BYTE, peers[k], 1, MPI_COMM_WORLD, &sreq[s]);
        }
      MPI_Waitall(slots, sreq, MPI_STATUSES_IGNORE);
      MPI_Waitall(slots, rreq, MPI_STATUSES_IGNORE);
    }
    if (is_core) {
      double elapsed = MPI_Wtime() - start, sum = 0.0;
      MPI_Reduce(&elapsed, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, core_comm);
      if (rank == 0) {
        double msgs = (double)win * nbors * cores * iters * 2.0;
        printf("%ld %ld %.2f\n", msg, iters, msgs / (sum / cores));
        fflush(stdout);
      }
    }
    iters -= iters / 5;
  }
  MPI_Finalize();
  return 0;
}
