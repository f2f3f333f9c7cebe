/* sandboxes.h — the sandboxes netd serves: each one's address (a /30 of the pool, found back
 * from a packet's source address in O(1)), policy, the addresses its resolver answers allowed
 * (pins), its counters and its last refusals (what each may reach: verdict.h).
 *
 * Each attached sandbox is a file <state_dir>/<id>.json (id, session, index, policy), so a
 * restarted netd takes back the sandboxes whose veth still exists. Refusals are also sent to
 * the subscribed gateways (control.h). */
#ifndef SP_NETD_SANDBOXES_H
#define SP_NETD_SANDBOXES_H

#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "net_policy.h"

#define SB_REFUSALS_KEPT 64
#define SB_PINS_MAX      4096
#define SB_REPORTS_PER_S                                                                           \
    20 /* refusals logged and sent to the gateways a second, at most (the                          \
        * rest are counted and kept in the log, and said as "unreported") */

typedef struct {
    double t;       /* wall clock */
    char proto[4];  /* "tcp", "dns" */
    char dest[24];  /* a.b.c.d:port, "" for dns */
    char name[254]; /* the name asked or sniffed, "" if none */
    char rule[96];  /* why */
} sb_refusal_t;

typedef struct {
    struct in_addr addr;
    double until; /* monotonic */
    char name[254];
} sb_pin_t;

typedef struct netd_sb {
    struct netd_sb *next;
    char id[64], session[64], ifname[16];
    int index;
    struct in_addr addr, host_addr;
    net_policy_t policy;
    json_object *policy_json; /* normalised */
    sb_pin_t *pins;
    int npins;
    int open_conns;
    int dns_inflight; /* queries sent upstream, not answered yet */
    uint64_t connections, refused, dns_queries, dns_refused, bytes_out, bytes_in;
    sb_refusal_t refusals[SB_REFUSALS_KEPT];
    int nrefusals;                   /* kept, at most SB_REFUSALS_KEPT */
    uint64_t refusal_seq;            /* refusals ever */
    double tokens_out, tokens_in;    /* bandwidth buckets (g_netd.bandwidth) */
    double report_tokens, report_at; /* refusals logged and reported: SB_REPORTS_PER_S */
    uint64_t unreported;             /* refusals counted but not reported since the last one */
} netd_sb_t;

int sandboxes_init(err_t *err);
/* Attaches (or, for an attached id, updates the policy of) a sandbox: policy is its normalised
 * JSON (parsed again here), netns_fd its network namespace (not kept). */
netd_sb_t *sandboxes_attach(const char *id, const char *session, json_object *policy, int netns_fd,
                            err_t *err);
int sandboxes_detach(const char *id, err_t *err);
netd_sb_t *sandboxes_find(const char *id);
/* The sandbox whose address a is, or NULL. */
netd_sb_t *sandboxes_by_addr(struct in_addr a);
netd_sb_t *sandboxes_first(void);
/* Drops the sandboxes whose veth is gone (their namespace died), expired pins. */
void sandboxes_sweep(void);
/* Restores the state directory's sandboxes (at start). */
void sandboxes_restore(void);
/* Removes every veth and state file (a clean stop: --cleanup). */
void sandboxes_detach_all(void);

/* Remembers that name, which the policy allows, resolved to a for sb (for ttl seconds). */
void sandboxes_pin(netd_sb_t *sb, struct in_addr a, const char *name, uint32_t ttl);

/* Counts and logs a refusal, tells the subscribed gateways. */
void sandboxes_refused(netd_sb_t *sb, const char *proto, const char *dest, const char *name,
                       const char *rule);

/* {"id", "session", "address", "interface", "policy", "counters": {...}, "refusals": [...]} */
json_object *sandboxes_info(const netd_sb_t *sb);

#endif
