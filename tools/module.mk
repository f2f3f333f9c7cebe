# sandpipe-exec (tools/sandpipe-exec/): the executor's debug client, speaking its protocol on a
# unix socket through common/exec_client.
SPX_SRCS := $(wildcard tools/sandpipe-exec/*.c)
SPX_OBJS := $(SPX_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/sandpipe-exec: $(SPX_OBJS) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

BINS += $(BUILD)/sandpipe-exec
