/* A plain MPI program for the network-selection proof of one-sided and collective traffic,
 * between ranks 0 and 1:
 *
 *   onesided put ROUNDS BYTES        rank 0 puts BYTES into rank 1's window, ROUNDS times
 *   onesided get ROUNDS BYTES        rank 0 gets BYTES from rank 1's window, ROUNDS times
 *   onesided allreduce ROUNDS BYTES  an MPI_Allreduce (sum of ints) of BYTES, ROUNDS times
 *
 * (defaults 16 x 4 MiB). Every round's data is checked where it lands; rank 0 prints
 * "payload MODE BYTES" (the bytes one direction must carry) only when all of it arrived
 * intact, and the program exits 1 otherwise. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fill(int round, int rank, long i) { return (int)((round * 131L + rank * 17L + i) % 1000003L); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "put";
  int rounds = argc > 2 ? atoi(argv[2]) : 16;
  long bytes = argc > 3 ? atol(argv[3]) : 4L << 20;
  long n = bytes / (long)sizeof(int);
  int bad = 0;
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "onesided: needs exactly 2 ranks, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int *local = malloc(n * sizeof(int));
  int *other = malloc(n * sizeof(int));
  if (!local || !other) MPI_Abort(MPI_COMM_WORLD, 2);
  int peer = 1 - rank;

  if (strcmp(mode, "put") == 0 || strcmp(mode, "get") == 0) {
    int put = strcmp(mode, "put") == 0;
    int *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int r = 0; r < rounds; r++) {
      /* The origin of a put, and the target of a get, fill their data for this round. */
      if (put && rank == 0)
        for (long i = 0; i < n; i++) local[i] = fill(r, 0, i);
      if (!put && rank == 1)
        for (long i = 0; i < n; i++) base[i] = fill(r, 1, i);
      MPI_Win_fence(0, win);
      if (rank == 0) {
        if (put)
          MPI_Put(local, (int)n, MPI_INT, peer, 0, (int)n, MPI_INT, win);
        else
          MPI_Get(local, (int)n, MPI_INT, peer, 0, (int)n, MPI_INT, win);
      }
      MPI_Win_fence(0, win);
      if (put && rank == 1)
        for (long i = 0; i < n; i++) bad += base[i] != fill(r, 0, i);
      if (!put && rank == 0)
        for (long i = 0; i < n; i++) bad += local[i] != fill(r, 1, i);
    }
    MPI_Win_free(&win);
  } else if (strcmp(mode, "allreduce") == 0) {
    for (int r = 0; r < rounds; r++) {
      for (long i = 0; i < n; i++) local[i] = fill(r, rank, i);
      MPI_Allreduce(local, other, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      for (long i = 0; i < n; i++) bad += other[i] != fill(r, 0, i) + fill(r, 1, i);
    }
  } else {
    if (rank == 0) fprintf(stderr, "onesided: unknown mode %s (put, get, allreduce)\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf("payload %s %ld\n", mode, (long)rounds * n * (long)sizeof(int));
    else
      fprintf(stderr, "onesided %s: %d ints arrived wrong\n", mode, total);
  }
  free(local);
  free(other);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
