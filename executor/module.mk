# sandpipe-executor and its debug client sandpipe-exec.
# Every executor/*.c except the two mains goes into libspexec.a, which unit tests link too.
EXECUTOR_MAINS := executor/main.c executor/exec_cli.c
EXECUTOR_SRCS := $(filter-out $(EXECUTOR_MAINS),$(wildcard executor/*.c))
EXECUTOR_OBJS := $(EXECUTOR_SRCS:%.c=$(BUILD)/%.o)
EXECUTOR_LIB := $(BUILD)/libspexec.a
# The executor needs only json-c (no OpenSSL): less to map in every sandbox.
EXECUTOR_LIBS := -lutil $(shell pkg-config --libs json-c)

$(EXECUTOR_LIB): $(EXECUTOR_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

$(BUILD)/sandpipe-executor: $(BUILD)/executor/main.o $(EXECUTOR_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(EXECUTOR_LIBS)

# The debug client's own files live in executor/cli/ (not part of libspexec.a).
EXEC_CLI_SRCS := executor/exec_cli.c $(wildcard executor/cli/*.c)
EXEC_CLI_OBJS := $(EXEC_CLI_SRCS:%.c=$(BUILD)/%.o)

$(BUILD)/sandpipe-exec: $(EXEC_CLI_OBJS) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

BINS += $(BUILD)/sandpipe-executor $(BUILD)/sandpipe-exec
