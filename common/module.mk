# libspcommon.a: what more than one program uses (frames, the executor client, JSON/buffer helpers,
# JWT, base64, UTF-8, errors). A module used by one program lives in that program's folder.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/libspcommon.a

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
