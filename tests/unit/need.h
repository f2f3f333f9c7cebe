/* need.h — NEED(cond, why): a test whose precondition does not hold here fails, unless
 * SANDPIPE_ALLOW_SKIP is set (for machines known to lack it): a skipped test is not a pass.
 * Include after <cmocka.h>. */
#ifndef SP_TEST_NEED_H
#define SP_TEST_NEED_H

#include <stdlib.h>

#define NEED(cond, why)                                                                            \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (getenv("SANDPIPE_ALLOW_SKIP"))                                                     \
                skip();                                                                            \
            fail_msg("cannot run here: %s", why);                                                  \
        }                                                                                          \
    } while (0)

#endif
