# GPU scenarios run by a Python program under the real trec over the fake
# CUPTI (tests/gpu/fake_native_launch.c, loaded with ctypes by
# tests/e2e/gpu_via_thread.sh).  Built only with the CUPTI headers, like
# the injection it drives.
FAKE_NATIVE_LAUNCH_SO := $(BUILD)/tests/libfake-native-launch.so

ifeq ($(HAVE_CUPTI),1)
TEST_EXTRA_DEPS += $(FAKE_NATIVE_LAUNCH_SO)
$(FAKE_NATIVE_LAUNCH_SO): tests/gpu/fake_native_launch.c $(FAKE_CUPTI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -shared -MMD -MP -o $@ $< $(FAKE_CUPTI_OBJ) \
	  $(LDFLAGS_EXTRA) -pthread -ldl
endif
