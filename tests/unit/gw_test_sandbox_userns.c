/* gw_test_sandbox_userns.c — sandbox_userns_open from several threads at once, as the gateway's
 * sandbox starts run (gateway/sandbox_start.h): every open returns, none waits on a holder that
 * another thread's holder keeps alive (each holder inherits the pipes open at its fork). Real
 * kernel, real user namespaces. Needs root. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "need.h"

#include "gateway/sandbox/provider.h"
#include "gateway/sandbox/sandbox_userns.h"

#define THREADS 4
#define OPENS   200 /* each: the first run that hung did so after ~200 sandbox starts */

typedef struct {
    uid_t uid;
    int opened, failed;
    err_t err;
} opener_t;

static void *
open_many(void *arg)
{
    opener_t *o = arg;
    for (int i = 0; i < OPENS; i++) {
        int fd = sandbox_userns_open(o->uid, (gid_t)o->uid, SANDBOX_UID_WIDTH, &o->err);
        if (fd < 0) {
            o->failed++;
            continue;
        }
        close(fd);
        o->opened++;
    }
    return NULL;
}

/* Our children (holders that hung; each thread lists those it forked): SIGKILLed, so a failed
 * run leaves nothing behind. */
static void
kill_children(void)
{
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        FILE *c = e->d_name[0] != '.' ? fopen(path, "re") : NULL;
        int pid;
        while (c && fscanf(c, "%d", &pid) == 1)
            kill(pid, SIGKILL);
        if (c)
            fclose(c);
    }
    if (d)
        closedir(d);
}

static void
test_userns_opens_from_several_threads_all_return(void **state)
{
    (void)state;
    NEED(geteuid() == 0, "root (a user namespace mapping another uid block)");
    opener_t o[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&o[i], 0, sizeof o[i]);
        o[i].uid = PROVIDER_UID_BASE + (uid_t)(100 + i) * SANDBOX_UID_WIDTH;
        assert_int_equal(pthread_create(&t[i], NULL, open_many, &o[i]), 0);
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 120; /* bounds a hang only: a run takes about a second */
    for (int i = 0; i < THREADS; i++) {
        int e = pthread_timedjoin_np(t[i], NULL, &deadline);
        if (e == ETIMEDOUT) {
            kill_children();
            fail_msg("thread %d hung after %d opens: a holder waits on a pipe another keeps", i,
                     o[i].opened + o[i].failed);
        }
        assert_int_equal(e, 0);
    }
    for (int i = 0; i < THREADS; i++) {
        if (o[i].failed)
            fail_msg("thread %d: %d opens failed: %s", i, o[i].failed, o[i].err.msg);
        assert_int_equal(o[i].opened, OPENS);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_userns_opens_from_several_threads_all_return),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
