# Runtime images: the builder script and what it puts in an image, installed next to the
# binaries (`sandpipe image` runs $(BUILD)/sandpipe-image; see images/sandpipe-image).
IMAGE_FILES := $(BUILD)/sandpipe-image $(BUILD)/sandpipe-image-setup.sh \
               $(BUILD)/sandpipe-image-sudo-shim
# code-server's package.json and lockfiles (sandpipe-image build --vscode), as images/vscode/ has them
IMAGE_VSCODE_FILES := $(patsubst images/vscode/%,$(BUILD)/sandpipe-image-vscode/%,\
    $(shell find images/vscode -type f -name '*.json'))
IMAGE_FILES += $(IMAGE_VSCODE_FILES)

$(BUILD)/sandpipe-image: images/sandpipe-image
	@mkdir -p $(dir $@)
	install -m 0755 $< $@
$(BUILD)/sandpipe-image-setup.sh: images/setup.sh
	@mkdir -p $(dir $@)
	install -m 0755 $< $@
$(BUILD)/sandpipe-image-sudo-shim: images/sudo-shim
	@mkdir -p $(dir $@)
	install -m 0755 $< $@
$(BUILD)/sandpipe-image-vscode/%: images/vscode/%
	@mkdir -p $(dir $@)
	install -m 0644 $< $@

BINS += $(IMAGE_FILES)
