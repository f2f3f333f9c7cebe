/* fuzz_port_table.c — the /proc/net/tcp{,6} parser (executor/port_table.c) over any bytes, read
 * as either family: it never reads past them, every entry it keeps is a listener of that family,
 * and sorting leaves one entry per (port, family, address) in order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "executor/port_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1); /* exactly the bytes: ASan sees any read past them */
    memcpy(text, data, size);
    static const int families[] = {AF_INET, AF_INET6};
    for (size_t f = 0; f < 2; f++) {
        port_table_t t = PORT_TABLE_INIT;
        size_t skipped = port_table_parse(&t, text, size, families[f]);
        if (skipped > size || t.n > size)
            __builtin_trap(); /* at most one per line */
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i].family != families[f] || t.v[i].pid || t.v[i].command)
                __builtin_trap();
        port_table_sort(&t);
        for (size_t i = 1; i < t.n; i++)
            if (port_sock_cmp(&t.v[i - 1], &t.v[i]) >= 0)
                __builtin_trap();
        for (size_t i = 0; i < t.n; i++) {
            char addr[INET6_ADDRSTRLEN];
            port_sock_address(&t.v[i], addr);
            if (!addr[0])
                __builtin_trap();
        }
        port_table_free(&t);
    }
    free(text);
    return 0;
}
