# The stack's own image (compose.yaml: redis, netd, gateway, api, nginx; deploy/kubernetes too, whose
# gateways run bwrap sandboxes: bubblewrap, and e2fsprogs for their disks), built locally FROM the local
# runtime image (`sandpipe image build --docker` makes sandpipe/runtime:default): the same Debian
# base, plus what the stack's programs load, plus the programs of build/release (make first).
FROM sandpipe/runtime:default
USER root
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        redis-server nginx-light libuv1 libwebsockets17 libwebsockets-evlib-uv libhiredis0.14 \
        libfcgi0ldbl libseccomp2 libcurl4 libssl3 libmnl0 libnftables1 \
        bubblewrap e2fsprogs >/dev/null && \
    rm -rf /var/lib/apt/lists/*
COPY build/release/sandpipe-gateway build/release/sandpipe-api build/release/sandpipe \
     build/release/sandpipe-executor build/release/sandpipe-sudo build/release/sandpipe-netd \
     /usr/local/bin/
COPY build/release/plugins /usr/local/bin/plugins
COPY nginx /opt/sandpipe/nginx
COPY web/dist /opt/sandpipe/web
COPY redis/redis.conf /opt/sandpipe/redis.conf
COPY redis/users.acl /opt/sandpipe/users.acl
WORKDIR /
