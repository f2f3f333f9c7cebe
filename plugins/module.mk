# Plugins the executor starts on demand, installed under $(BUILD)/plugins/ (the bwrap provider
# mounts that folder at /opt/sandpipe/plugins): sandpipe-jupyter, the IPython helper (ZeroMQ +
# OpenSSL, kept out of the executor), and the Python modules its kernel imports (agentskills).
JUPYTER_SRCS := $(filter-out plugins/jupyter/main.c,$(wildcard plugins/jupyter/*.c))
JUPYTER_OBJS := $(JUPYTER_SRCS:%.c=$(BUILD)/%.o)
JUPYTER_LIB := $(BUILD)/libspjupyter.a
JUPYTER_LIBS := $(shell pkg-config --libs libzmq) $(PKG_LIBS)
PLUGINS_PY := $(wildcard plugins/python/*.py)

$(JUPYTER_LIB): $(JUPYTER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/plugins/sandpipe-jupyter: $(BUILD)/plugins/jupyter/main.o $(JUPYTER_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(JUPYTER_LIBS)

$(BUILD)/plugins/python/%.py: plugins/python/%.py
	@mkdir -p $(dir $@)
	cp $< $@

BINS += $(BUILD)/plugins/sandpipe-jupyter $(PLUGINS_PY:plugins/python/%=$(BUILD)/plugins/python/%)
