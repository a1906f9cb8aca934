/* A note said on standard error when the process leaves without MPI_Init having
 * returned: a library that cannot connect the hosts of a job (a network selection that
 * cuts them apart) ends the job inside MPI_Init, before the benchmark's own cross-host
 * check can speak; each rank then names its host's selection on the way out. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char note[4096];
static volatile int armed;
static int registered;

static void say_note(void) {
    if (!armed) {
        return;
    }
    size_t left = strlen(note);
    const char *p = note;
    while (left > 0) {
        ssize_t n = write(2, p, left);
        if (n <= 0) {
            return;
        }
        p += n;
        left -= (size_t)n;
    }
}

/* Keeps a copy of `text` (cut at the buffer's size) to say at exit, until disarmed. */
int xylem_arm_init_note(const char *text) {
    strncpy(note, text, sizeof note - 1);
    note[sizeof note - 1] = '\0';
    armed = 1;
    if (!registered) {
        if (atexit(say_note) != 0) {
            return -1;
        }
        registered = 1;
    }
    return 0;
}

/* MPI_Init returned: nothing to say any more. */
void xylem_disarm_init_note(void) { armed = 0; }
