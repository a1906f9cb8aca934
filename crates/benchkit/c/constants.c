/* MPI constants that the mpi crate's shim does not export; each library defines them its
 * own way (a link-time object in Open MPI, an integer constant in MPICH), so they are
 * read through functions compiled against the library's own mpi.h. */
#include <mpi.h>

MPI_Datatype xylem_mpi_byte(void) { return MPI_BYTE; }

/* The MPI library whose mpi.h this was compiled against, by the macros each family
 * defines (Intel MPI defines MPICH's too, so it comes first). */
#define XYLEM_STR2(x) #x
#define XYLEM_STR(x) XYLEM_STR2(x)
const char *xylem_mpi_header(void) {
#if defined(I_MPI_VERSION)
    return "Intel MPI " I_MPI_VERSION;
#elif defined(OMPI_MAJOR_VERSION)
    return "Open MPI " XYLEM_STR(OMPI_MAJOR_VERSION) "." XYLEM_STR(OMPI_MINOR_VERSION) "." XYLEM_STR(OMPI_RELEASE_VERSION);
#elif defined(MVAPICH2_VERSION)
    return "MVAPICH2 " MVAPICH2_VERSION;
#elif defined(MPICH_VERSION)
    return "MPICH " MPICH_VERSION;
#else
    return "an MPI " XYLEM_STR(MPI_VERSION) "." XYLEM_STR(MPI_SUBVERSION) " library";
#endif
}
