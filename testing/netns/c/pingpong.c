/* A plain MPI program for the network-selection proof: ranks 0 and 1 exchange
 * ROUNDS messages of BYTES each way (defaults 50 x 1 MiB) and rank 0 prints the payload. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  int bytes = argc > 2 ? atoi(argv[2]) : 1 << 20;
  char *buf = calloc(bytes, 1);
  int peer = 1 - rank;
  for (int i = 0; i < rounds && rank < 2; i++) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("payload_each_way %ld\n", (long)rounds * bytes);
  free(buf);
  MPI_Finalize();
  return 0;
}
