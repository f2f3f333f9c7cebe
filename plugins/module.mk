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

# sandpipe-browser: headless Chromium over the DevTools pipe. page.js (the script it evaluates in
# pages) is compiled in as a C string.
BROWSER_SRCS := $(filter-out plugins/browser/main.c,$(wildcard plugins/browser/*.c))
BROWSER_OBJS := $(BROWSER_SRCS:%.c=$(BUILD)/%.o)
BROWSER_LIB := $(BUILD)/libspbrowser.a

$(BROWSER_LIB): $(BROWSER_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

$(BUILD)/plugins/browser/page_js.h: plugins/browser/page.js
	@mkdir -p $(dir $@)
	{ printf 'static const char PAGE_JS[] = '; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; printf ';\n'; } > $@

$(BUILD)/plugins/browser/main.o: $(BUILD)/plugins/browser/page_js.h
$(BUILD)/plugins/browser/main.o: ALL_CFLAGS += -I$(BUILD)/plugins/browser

$(BUILD)/plugins/sandpipe-browser: $(BUILD)/plugins/browser/main.o $(BROWSER_LIB) $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

BINS += $(BUILD)/plugins/sandpipe-browser
