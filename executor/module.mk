# sandpipe-executor: one per sandbox. Every executor/*.c except main.c goes into libspexec.a,
# which unit tests link too.
EXECUTOR_SRCS := $(filter-out executor/main.c,$(wildcard executor/*.c))
EXECUTOR_OBJS := $(EXECUTOR_SRCS:%.c=$(BUILD)/%.o)
EXECUTOR_LIB := $(BUILD)/libspexec.a
# The executor needs only json-c (no OpenSSL): less to map in every sandbox.
EXECUTOR_LIBS := -lutil $(shell pkg-config --libs json-c)

$(EXECUTOR_LIB): $(EXECUTOR_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/sandpipe-executor: $(BUILD)/executor/main.o $(EXECUTOR_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(EXECUTOR_LIBS)

BINS += $(BUILD)/sandpipe-executor

# sandpipe-sudo: bound over a bwrap sandbox's /usr/bin/sudo (executor/sudo/sudo_client.c); libc
# only, it runs on the image's libraries.
$(BUILD)/sandpipe-sudo: $(BUILD)/executor/sudo/sudo_client.o
	$(CC) $(ALL_LDFLAGS) -o $@ $^

BINS += $(BUILD)/sandpipe-sudo
