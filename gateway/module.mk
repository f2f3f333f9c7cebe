# sandpipe-gateway (and, later, sandpipe-api). Every gateway/*.c except the mains goes into
# libspgw.a, which the gateway's tests link too.
GATEWAY_MAINS := gateway/main.c gateway/api_main.c gateway/token_cli.c
GATEWAY_SRCS := $(filter-out $(GATEWAY_MAINS),$(wildcard gateway/*.c))
GATEWAY_OBJS := $(filter-out $(BUILD)/gateway/api_%.o,$(GATEWAY_SRCS:%.c=$(BUILD)/%.o))
GATEWAY_LIB := $(BUILD)/libspgw.a
GATEWAY_PKGS := libuv libwebsockets hiredis openssl libseccomp
GATEWAY_CFLAGS := $(shell pkg-config --cflags $(GATEWAY_PKGS) 2>/dev/null)
GATEWAY_LIBS := $(shell pkg-config --libs $(GATEWAY_PKGS) 2>/dev/null) $(PKG_LIBS)

$(GATEWAY_OBJS): ALL_CFLAGS += $(GATEWAY_CFLAGS)

$(GATEWAY_LIB): $(GATEWAY_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

ifneq ($(wildcard gateway/main.c),)
$(BUILD)/gateway/main.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)
$(BUILD)/sandpipe-gateway: $(BUILD)/gateway/main.o $(GATEWAY_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(GATEWAY_LIBS)
BINS += $(BUILD)/sandpipe-gateway
endif

# sandpipe-api: FastCGI workers. Its modules (gateway/api_*.c) go into their own library so
# the gateway does not link libfcgi.
API_SRCS := $(filter gateway/api_%.c,$(GATEWAY_SRCS))
API_OBJS := $(API_SRCS:%.c=$(BUILD)/%.o)
API_LIB := $(BUILD)/libspapi.a
API_LIBS := $(shell pkg-config --libs hiredis openssl 2>/dev/null) -lfcgi $(PKG_LIBS)

$(API_OBJS) $(BUILD)/gateway/api_main.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)

$(API_LIB): $(API_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

ifneq ($(wildcard gateway/api_main.c),)
$(BUILD)/sandpipe-api: $(BUILD)/gateway/api_main.o $(API_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(API_LIBS)
BINS += $(BUILD)/sandpipe-api
endif

$(BUILD)/sandpipe-token: $(BUILD)/gateway/token_cli.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)
BINS += $(BUILD)/sandpipe-token
