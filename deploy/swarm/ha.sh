#!/bin/sh
# The Swarm stack's Redis with Sentinel (deploy/swarm/stack.yml): one entry point for both kinds
# of task, mounted as a Swarm config into the stack's image (no image of its own).
#   ha.sh redis NAME     a Redis node (NAME: its service, redis-1..3)
#   ha.sh sentinel NAME  a sentinel (sentinel-1..3)
# Both ask the sentinels first who the primary is now: a task restarted after a failover (on any
# node, with or without its data) comes back as a replica of the current primary, never as a
# second primary. Only on a stack where no sentinel knows one yet is redis-1 the primary.
# Passwords are Swarm secrets in /run/secrets (mode 0400); the files written here are 0600.
set -eu
kind=$1 me=$2
master=sandpipe
sentinels="sentinel-1 sentinel-2 sentinel-3"
secret() { cat "/run/secrets/$1"; }
umask 077

current_primary() {
    for s in $sentinels; do
        [ "$s" = "$me" ] && continue
        a=$(REDISCLI_AUTH=$(secret sentinel.password) timeout 2 redis-cli -h "$s" -p 26379 \
            SENTINEL get-master-addr-by-name "$master" 2>/dev/null | head -1) || a=
        case "$a" in redis-*) echo "$a"; return ;; esac
    done
    echo redis-1
}

primary=$(current_primary)
case "$kind" in
redis)
    sandpipe redis-acl --dir /run/secrets --template /opt/sandpipe/users.acl --out /tmp/users.acl
    {
        echo "include /opt/sandpipe/redis.conf"
        echo "bind 0.0.0.0"
        echo "port 6379"
        echo "dir /data"
        echo "aclfile /tmp/users.acl"
        echo "replica-announce-ip $me"
        echo "masteruser replica"
        echo "masterauth $(secret redis-replica.password)"
        [ "$primary" = "$me" ] || echo "replicaof $primary 6379"
    } >/tmp/redis.conf
    echo "ha.sh: $me starts as $([ "$primary" = "$me" ] && echo primary || echo "replica of $primary")" >&2
    exec redis-server /tmp/redis.conf
    ;;
sentinel)
    # resolve-hostnames: the Redis nodes are service names (their addresses change when a task
    # is rescheduled); announce-hostnames: clients are told names, not a task's old address.
    {
        echo "port 26379"
        echo "dir /tmp"
        echo "requirepass $(secret sentinel.password)"
        echo "sentinel sentinel-pass $(secret sentinel.password)"
        echo "sentinel resolve-hostnames yes"
        echo "sentinel announce-hostnames yes"
        echo "sentinel announce-ip $me"
        echo "sentinel monitor $master $primary 6379 2"
        echo "sentinel auth-user $master sentinel"
        echo "sentinel auth-pass $master $(secret redis-sentinel.password)"
        echo "sentinel down-after-milliseconds $master ${SANDPIPE_SENTINEL_DOWN_MS:-5000}"
        echo "sentinel failover-timeout $master 30000"
    } >/tmp/sentinel.conf
    exec redis-server /tmp/sentinel.conf --sentinel
    ;;
*)
    echo "usage: ha.sh redis|sentinel NAME" >&2
    exit 2
    ;;
esac
