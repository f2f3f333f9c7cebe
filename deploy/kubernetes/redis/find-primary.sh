#!/bin/sh
# Prints the Redis primary's name: what the sentinels answer (after a failover, the promoted
# replica), else, on a first start when no sentinel knows one yet, redis-0's. Both containers of
# a redis pod start from it, so a restarted primary comes back as a replica of its successor.
# Sourced with REDIS_SERVICE and POD_NAMESPACE set (the StatefulSet's env).
find_primary() {
    for i in 0 1 2; do
        p=$(REDISCLI_AUTH=$(cat /run/sandpipe/redis-auth/sentinel.password) redis-cli -h "redis-$i.$REDIS_SERVICE.$POD_NAMESPACE.svc.cluster.local" -p 26379 \
            --raw SENTINEL get-master-addr-by-name sandpipe 2>/dev/null | head -n 1)
        [ -n "$p" ] && { echo "$p"; return; }
    done
    echo "redis-0.$REDIS_SERVICE.$POD_NAMESPACE.svc.cluster.local"
}
