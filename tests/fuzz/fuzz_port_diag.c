/* fuzz_port_diag.c — the sock_diag dump decoder (executor/port_diag.c) over any bytes, read as
 * either family: it never reads past them, and every entry it keeps is a listener of that
 * family with no owner. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "executor/port_diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *msgs = malloc(size ? size : 1); /* exactly the bytes: ASan sees any read past them */
    memcpy(msgs, data, size);
    static const int families[] = {AF_INET, AF_INET6};
    for (size_t f = 0; f < 2; f++) {
        port_table_t t = PORT_TABLE_INIT;
        int rc = port_diag_parse(&t, msgs, size, families[f]);
        if (rc > 1 || t.n > size / 16) /* one per message, a message is 16 bytes at least */
            __builtin_trap();
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i].family != families[f] || t.v[i].pid || t.v[i].command)
                __builtin_trap();
        port_table_free(&t);
    }
    free(msgs);
    return 0;
}
