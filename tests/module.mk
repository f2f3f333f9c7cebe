# Unit tests: one cmocka binary per tests/unit/test_<module>.c, linked with the executor and
# common libraries. Fuzz targets: tests/fuzz/fuzz_<parser>.c, built twice: with a replay main()
# (runs the corpus in make test) and, with clang, as a libFuzzer binary (make fuzz).
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%_replay)

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(EXECUTOR_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ -lcmocka $(EXECUTOR_LIBS)

$(BUILD)/tests/fuzz/%_replay: $(BUILD)/tests/fuzz/%.o $(BUILD)/tests/fuzz/replay_main.o $(EXECUTOR_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(EXECUTOR_LIBS)

$(BUILD)/tests/fuzz/replay_main.o: tests/fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

FUZZ_LIBFUZZER_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=build/fuzz/%)
build/fuzz/%: tests/fuzz/%.c $(COMMON_SRCS) $(EXECUTOR_SRCS)
	@mkdir -p $(dir $@)
	clang $(CFLAGS_BASE) -MF /dev/null -O1 -g -fsanitize=fuzzer,address,undefined -o $@ $^ $(EXECUTOR_LIBS)

tests: $(UNIT_BINS) $(FUZZ_REPLAY_BINS)
all: tests
fuzz: $(FUZZ_LIBFUZZER_BINS)
