# Unit tests: one cmocka binary per tests/unit/test_<module>.c, linked with the executor, API and
# common libraries (an archive gives each test only the modules it uses). Fuzz targets: tests/fuzz/fuzz_<parser>.c, built twice: with a replay main()
# (runs the corpus in make test) and, with clang, as a libFuzzer binary (make fuzz).
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
# Gateway unit tests (tests/unit/gw_test_*.c) link the gateway library and its packages.
GW_UNIT_SRCS := $(wildcard tests/unit/gw_test_*.c)
GW_UNIT_BINS := $(GW_UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%_replay)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(EXECUTOR_LIB) $(API_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka -lutil $(PKG_LIBS)

# The browser plugin's pure modules (axtree.c): its library too.
$(BUILD)/tests/unit/test_axtree: $(BUILD)/tests/unit/test_axtree.o $(BROWSER_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(PKG_LIBS)

# API unit tests (tests/unit/test_api_*.c) reach the route handlers: the API's libraries too.
$(BUILD)/tests/unit/test_api_%.o: ALL_CFLAGS += $(API_CFLAGS)
$(BUILD)/tests/unit/test_api_%: $(BUILD)/tests/unit/test_api_%.o $(API_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(API_LIBS)

# netd unit tests (tests/unit/test_netd_*.c) link netd's library.
$(BUILD)/tests/unit/test_netd_%.o: ALL_CFLAGS += $(NETD_CFLAGS)
$(BUILD)/tests/unit/test_netd_%: $(BUILD)/tests/unit/test_netd_%.o $(NETD_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(NETD_LIBS)

$(BUILD)/tests/unit/gw_test_%.o: ALL_CFLAGS += $(GATEWAY_CFLAGS)
$(BUILD)/tests/unit/gw_test_%: $(BUILD)/tests/unit/gw_test_%.o $(GATEWAY_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(GATEWAY_LIBS)

# The gateway's and the API's pure parsers, without those programs' libraries.
FUZZ_GW_SRCS := gateway/preview_head.c gateway/envd_wire.c gateway/envd_path.c gateway/envd_entry.c api/e2b/metadata_filter.c

$(BUILD)/tests/fuzz/%_replay: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/replay_main.o $(FUZZ_GW_SRCS:%.c=$(BUILD)/%.o) $(EXECUTOR_LIB) $(API_LIB) $(JUPYTER_LIB) $(BROWSER_LIB) $(NETD_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lutil $(PKG_LIBS) $(NETD_LIBS)

$(BUILD)/tests/fuzz/%.o: ALL_CFLAGS += -Inetd -Igateway -Iapi/e2b

$(BUILD)/tests/fuzz/replay_main.o: tests/fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# libFuzzer builds (clang): one binary per target, compiled from source with the sanitizers.
# `make fuzz` builds them; `make fuzz-run FUZZ_TIME=60` runs each for FUZZ_TIME seconds, new
# inputs going to build/fuzz/corpus/<target> (copy the interesting ones into tests/fuzz/corpus).
# `make fuzz-replay` runs every replay binary over tests/fuzz/corpus/<target>.
FUZZ_TIME ?= 60
FUZZ_CFLAGS := $(CFLAGS_BASE) -Inetd -Igateway -Iapi/e2b -O1 -g -fsanitize=fuzzer-no-link,address,undefined
FUZZ_LIBFUZZER_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
FUZZ_DEPS_OBJS := $(COMMON_SRCS:%.c=build/fuzz/obj/%.o) $(EXECUTOR_SRCS:%.c=build/fuzz/obj/%.o) \
                  $(NETD_SRCS:%.c=build/fuzz/obj/%.o) $(FUZZ_GW_SRCS:%.c=build/fuzz/obj/%.o) \
                  build/fuzz/obj/plugins/jupyter/wire.o \
                  build/fuzz/obj/plugins/browser/action.o build/fuzz/obj/plugins/browser/axtree.o

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -c $< -o $@

# An archive, so a target links only the modules it uses.
build/fuzz/libfuzzdeps.a: $(FUZZ_DEPS_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_LIBFUZZER_BINS): build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o build/fuzz/libfuzzdeps.a
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ -lutil $(PKG_LIBS) $(NETD_LIBS)

tests: $(UNIT_BINS) $(GW_UNIT_BINS) $(FUZZ_REPLAY_BINS)
all: tests
fuzz: $(FUZZ_LIBFUZZER_BINS)

fuzz-replay: $(FUZZ_REPLAY_BINS)
	@set -e; for b in $(FUZZ_REPLAY_BINS); do \
	    t=$$(basename $$b _replay); \
	    if [ -d tests/fuzz/corpus/$$t ]; then $$b tests/fuzz/corpus/$$t; \
	    else echo "$$t: no corpus in tests/fuzz/corpus/$$t"; fi; \
	done

fuzz-run: $(FUZZ_LIBFUZZER_BINS)
	@set -e; for b in $(FUZZ_LIBFUZZER_BINS); do \
	    t=$$(basename $$b); mkdir -p build/fuzz/corpus/$$t; \
	    $$b -max_total_time=$(FUZZ_TIME) -rss_limit_mb=2048 build/fuzz/corpus/$$t \
	        $$(test -d tests/fuzz/corpus/$$t && echo tests/fuzz/corpus/$$t); \
	done

.PHONY: fuzz fuzz-replay fuzz-run
