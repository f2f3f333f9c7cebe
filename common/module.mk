COMMON_SRCS := common/err.c common/xalloc.c common/buf.c common/frame.c common/json_util.c common/path_confine.c common/exec_client.c common/exec_client_feed.c common/jwt.c common/jwt_secret.c common/io.c common/base64.c common/zip_name.c common/zip_read.c common/zip_write.c common/multipart.c common/utf8.c
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/%.o)
COMMON_LIB := $(BUILD)/libspcommon.a

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^
