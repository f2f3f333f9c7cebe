# sandpipe: the command-line client (the WebSocket API, and for cp the REST API's streamed file
# routes, over libwebsockets' client on libuv).
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
CLI_PKGS := libuv libwebsockets
CLI_CFLAGS := $(shell pkg-config --cflags $(CLI_PKGS) 2>/dev/null)
CLI_LIBS := $(shell pkg-config --libs $(CLI_PKGS) 2>/dev/null) $(PKG_LIBS)

$(CLI_OBJS): ALL_CFLAGS += $(CLI_CFLAGS)

$(BUILD)/sandpipe: $(CLI_OBJS) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CLI_LIBS)
BINS += $(BUILD)/sandpipe
