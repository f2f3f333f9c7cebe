/* takeover.h — several gateways share one host's sandboxes; when one dies, a live peer on the
 * same host takes its sessions (and its warm pool) over; when a host's last gateway is gone, a
 * gateway elsewhere marks that host's sessions ERROR_RUNTIME_DISCONNECTED.
 *
 * Every gateway records where it runs in `sp:gateway:ID:info` (host, pid, pid_start, boot, pidns,
 * started) and beats `sp:gateway:ID` (TTL TAKEOVER_TTL_MS, every second). Every TAKEOVER_SCAN_MS it
 * reads all peers in one Lua call and judges each one that still owns sessions or warm sandboxes:
 * - same host, same boot and pid namespace: dead when its pid is gone (or a zombie, or reused),
 *   known at once and never fooled by a slow loop; or when its heartbeat has been missing for
 *   TAKEOVER_HUNG_MS (a hung process).
 * - otherwise: dead when its heartbeat key expired.
 * A dead peer on our host is claimed by one Lua script (atomic: exactly one claimer wins, and a
 * peer that restarted meanwhile is left alone), which rewrites `gateway` of each session, moves
 * `sp:gateway:D:sessions` into ours, pops its warm pool and leaves `sp:gateway:D:taken`; the
 * sessions are then re-attached as after a restart (session_restore.c) and each gets a status
 * event saying so. A dead peer on a host with no live gateway left (a node lost) gets its sessions
 * marked ERROR_RUNTIME_DISCONNECTED (status field, a status event in the stream, sp:status) by the
 * first gateway elsewhere that sees it; they stay in its set, so a gateway starting on that host
 * later takes them back (and a gateway that was only cut off from Redis re-reads them from Redis
 * when it is back).
 *
 * The scripts touch keys of several sessions: they need one Redis (a primary, with or without
 * Sentinel), not Redis Cluster. */
#ifndef SP_TAKEOVER_H
#define SP_TAKEOVER_H

#include <hiredis/hiredis.h>
#include <stdbool.h>

#define TAKEOVER_TTL_MS  5000  /* heartbeat key lifetime (beaten every second) */
#define TAKEOVER_SCAN_MS 500   /* how often peers are looked at */
#define TAKEOVER_HUNG_MS 30000 /* same host, process alive, no heartbeat this long: hung */
/* Heartbeats are judged only once Redis has answered this long (after a Redis restart every key
 * may have expired; peers reconnect and beat within about a second). */
#define TAKEOVER_SETTLE_MS 2000
/* A gateway of another host whose heartbeat has been missing this long, with no live gateway
 * left on its host: its sessions are marked ERROR_RUNTIME_DISCONNECTED. */
#define TAKEOVER_ORPHAN_MS 10000

/* The default --host-id: /etc/machine-id, else the hostname. */
void takeover_default_host_id(char *out, size_t cap);

/* At start (blocking connection, before this gateway's sessions are read): records info, beats,
 * clears what a peer left for an earlier life of this id (its takeover mark). From then on no
 * peer can claim this id's sessions (its pid is alive). */
bool takeover_register(redisContext *rc); /* true: a peer had taken this id's sessions */
/* After a reconnection to Redis, before anything else is written: the same, on a blocking
 * connection, dropping the sessions a peer took meanwhile (so none of their fields or events is
 * written by this gateway again). */
void takeover_recheck(void);
/* Every second: the heartbeat. Also finds out whether a peer took this gateway's sessions while
 * it was stalled (the mark): they are then dropped here, without touching Redis. */
void takeover_heartbeat(void);
/* Starts / stops watching peers (after the first Redis connection / at shutdown). */
void takeover_start(void);
void takeover_stop(void);

#endif
