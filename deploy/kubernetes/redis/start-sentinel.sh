#!/bin/sh
# The sentinel container of a redis-N pod: three of them (quorum 2) watch the primary by name
# (hostnames resolved and announced: pod IPs change, names do not) as the ACL user `sentinel`.
# Its file is made anew at each start from the primary the sentinels name now; sentinel rewrites
# it as it learns (epochs, replicas, the other sentinels). The sentinels answer nobody without
# their own password (sentinel.password: the gateways', the API's, each other's), as in Swarm.
set -eu
. /opt/sandpipe/k8s/find-primary.sh
SELF="$HOSTNAME.$REDIS_SERVICE.$POD_NAMESPACE.svc.cluster.local"
primary=$(find_primary)
umask 077
cat >/tmp/sentinel.conf <<CONF
port 26379
bind 0.0.0.0
protected-mode no
dir /tmp
requirepass $(cat /run/sandpipe/redis-auth/sentinel.password)
sentinel sentinel-pass $(cat /run/sandpipe/redis-auth/sentinel.password)
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip $SELF
sentinel monitor sandpipe $primary 6379 2
sentinel auth-user sandpipe sentinel
sentinel auth-pass sandpipe $(cat /run/sandpipe/redis-auth/redis-sentinel.password)
sentinel down-after-milliseconds sandpipe 5000
sentinel failover-timeout sandpipe 60000
sentinel parallel-syncs sandpipe 1
CONF
exec redis-server /tmp/sentinel.conf --sentinel
