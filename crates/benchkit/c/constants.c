/* MPI constants that the mpi crate's shim does not export; each library defines them its
 * own way (a link-time object in Open MPI, an integer constant in MPICH), so they are
 * read through functions compiled against the library's own mpi.h. */
#include <mpi.h>

MPI_Datatype xylem_mpi_byte(void) { return MPI_BYTE; }
