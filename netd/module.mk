# sandpipe-netd: the sandboxes' network, one per host, as root: a veth pair into each networked
# sandbox's own namespace, the host's nftables rules, and the egress proxy and resolver that
# enforce each sandbox's policy (docs/operations.md, "Network"). Everything but main.c goes into
# libspnetd.a, which its unit tests and fuzz targets link too.
NETD_SRCS := $(filter-out netd/main.c,$(wildcard netd/*.c))
NETD_OBJS := $(NETD_SRCS:%.c=$(BUILD)/%.o)
NETD_LIB := $(BUILD)/libspnetd.a
NETD_PKGS := libmnl libnftables
NETD_CFLAGS := $(shell pkg-config --cflags $(NETD_PKGS) 2>/dev/null) -Inetd
NETD_LIBS := $(shell pkg-config --libs $(NETD_PKGS) 2>/dev/null) $(PKG_LIBS)

$(NETD_OBJS) $(BUILD)/netd/main.o: ALL_CFLAGS += $(NETD_CFLAGS)

$(NETD_LIB): $(NETD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/sandpipe-netd: $(BUILD)/netd/main.o $(NETD_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(NETD_LIBS)

BINS += $(BUILD)/sandpipe-netd
