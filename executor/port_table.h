/* port_table.h — the listening TCP sockets of /proc/net/tcp and /proc/net/tcp6, parsed from
 * the file's bytes: pure (no I/O), so it is unit-tested and fuzzed. port_scan.h reads the files
 * and finds each socket's process.
 *
 * The kernel prints an address as 32-bit words in the host's byte order ("%08X" of each word:
 * 127.0.0.1 is 0100007F on x86); the parser stores the words as they lie in memory, which
 * gives back the address in network order on the host that wrote the text. */
#ifndef SP_PORT_TABLE_H
#define SP_PORT_TABLE_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int family;       /* AF_INET or AF_INET6 */
    uint8_t addr[16]; /* network order; 4 bytes for AF_INET */
    uint16_t port;
    uint64_t inode;
    int pid;       /* the process holding it, 0 when unknown (port_scan.h fills it) */
    char *command; /* its command line (owned), NULL when unknown */
} port_sock_t;

typedef struct {
    port_sock_t *v;
    size_t n, cap;
} port_table_t;

#define PORT_TABLE_INIT                                                                            \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Appends the sockets in LISTEN state (st 0A) of text[0..len), a /proc/net/tcp (family
 * AF_INET) or /proc/net/tcp6 (AF_INET6) text, to t. The header line and blank lines are
 * skipped; a line that is neither nor a socket line of the family is skipped and counted.
 * Returns the number of lines skipped that way (0 for a well-formed text). */
size_t port_table_parse(port_table_t *t, const char *text, size_t len, int family);

/* Appends a copy of s (its command, if any, now t's). */
void port_table_add(port_table_t *t, const port_sock_t *s);

/* Sorts t by port, then family (IPv4 first), then address, and keeps one entry per (port,
 * family, address): sockets sharing one (SO_REUSEPORT) are one listener to a client. */
void port_table_sort(port_table_t *t);

/* <0, 0, >0 as a sorts before, with, after b by port_table_sort's order. */
int port_sock_cmp(const port_sock_t *a, const port_sock_t *b);

/* The address as text ("0.0.0.0", "::1", "::ffff:10.0.0.2"): out holds INET6_ADDRSTRLEN. */
void port_sock_address(const port_sock_t *s, char out[INET6_ADDRSTRLEN]);

/* True for an address that matches any of the host's (0.0.0.0, ::). */
bool port_sock_is_wildcard(const port_sock_t *s);

/* Frees the entries' commands and the array; t is left empty. */
void port_table_free(port_table_t *t);

#endif
