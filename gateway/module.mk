# sandpipe-gateway: the WebSocket API, sessions, event log, warm pool (gateway/*.c) and the
# sandbox providers with their cgroups, disks, uids and seccomp filter (gateway/sandbox/*.c).
# Everything but main.c goes into libspgw.a, which the gateway's tests link too.
GATEWAY_SRCS := $(filter-out gateway/main.c,$(wildcard gateway/*.c gateway/sandbox/*.c))
GATEWAY_OBJS := $(GATEWAY_SRCS:%.c=$(BUILD)/%.o)
GATEWAY_LIB := $(BUILD)/libspgw.a
GATEWAY_PKGS := libuv libwebsockets hiredis openssl libseccomp libcurl
GATEWAY_CFLAGS := $(shell pkg-config --cflags $(GATEWAY_PKGS) 2>/dev/null) -Igateway
GATEWAY_LIBS := $(shell pkg-config --libs $(GATEWAY_PKGS) 2>/dev/null) $(PKG_LIBS)

$(GATEWAY_OBJS) $(BUILD)/gateway/main.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)

$(GATEWAY_LIB): $(GATEWAY_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/sandpipe-gateway: $(BUILD)/gateway/main.o $(GATEWAY_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(GATEWAY_LIBS)

BINS += $(BUILD)/sandpipe-gateway
