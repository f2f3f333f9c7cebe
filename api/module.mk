# sandpipe-api: the REST API as FastCGI workers (api/*.c), the two OpenHands APIs
# (api/openhands/: the action server /runtime/{id}/ and the Remote Runtime API /openhands/), E2B's
# control API (api/e2b/), and what only it needs. Everything but main.c goes into libspapi.a.
API_SRCS := $(filter-out api/main.c,$(wildcard api/*.c api/openhands/*.c api/e2b/*.c))
API_OBJS := $(API_SRCS:%.c=$(BUILD)/%.o)
API_LIB := $(BUILD)/libspapi.a
API_CFLAGS := $(shell pkg-config --cflags hiredis libcurl 2>/dev/null) -Iapi
API_LIBS := $(shell pkg-config --libs hiredis openssl libcurl 2>/dev/null) -lfcgi $(PKG_LIBS)

$(API_OBJS) $(BUILD)/api/main.o: ALL_CFLAGS += $(API_CFLAGS)

$(API_LIB): $(API_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/sandpipe-api: $(BUILD)/api/main.o $(API_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(API_LIBS)

BINS += $(BUILD)/sandpipe-api
