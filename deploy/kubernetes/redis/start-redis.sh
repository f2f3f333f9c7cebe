#!/bin/sh
# The redis container of a redis-N pod: its ACL rendered from the password files (as compose.yaml's
# redis), its AOF on the pod's volume, and primary or replica of the primary the sentinels name.
# The replica's credentials go into a 0600 file, never onto the command line.
set -eu
. /opt/sandpipe/k8s/find-primary.sh
SELF="$HOSTNAME.$REDIS_SERVICE.$POD_NAMESPACE.svc.cluster.local"
sandpipe redis-acl --dir /run/sandpipe/redis-auth --template /opt/sandpipe/users.acl \
    --out /tmp/users.acl
primary=$(find_primary)
umask 077
{
    echo "include /opt/sandpipe/redis.conf"
    echo "port 6379"
    echo "bind 0.0.0.0"
    echo "aclfile /tmp/users.acl"
    echo "dir /data"
    echo "replica-announce-ip $SELF"
    echo "masteruser replica"
    echo "masterauth $(cat /run/sandpipe/redis-auth/redis-replica.password)"
    [ "$primary" = "$SELF" ] || echo "replicaof $primary 6379"
} >/tmp/redis.conf
exec redis-server /tmp/redis.conf
