# mk/py.mk — rules owned by the CPython introspection code (lib/py/).
#
#   make py-layouts   regenerate lib/py/generated/layout_3_X.h (3.8–3.12) and
#                     lib/py/generated/objects_3_X.h and values_3_X.h (3.8–3.13, and
#                     objects_3_13t.h and values_3_13t.h: the 3.13 headers with Py_GIL_DISABLED) from every installed
#                     CPython's own headers (PY_PREFIXES lists the
#                     installation prefixes; default: pyenv's versions,
#                     under $PYENV_ROOT or `pyenv root`; none without pyenv).
#   $(BUILD)/py/libpytest.so   the library a Python process loads with
#                     ctypes to test the in-process walker (test_py_self);
#                     built from the lib/py sources without sanitizers, as
#                     it runs inside an interpreter that has no ASan runtime.
#   $(BUILD)/py/py_walk_bench  the per-sample cost benchmark (bench/py_walk.sh).

# Recursive (=): pyenv is asked only when py-layouts runs.
PYENV_DIR = $(or $(PYENV_ROOT),$(shell pyenv root 2>/dev/null))
PY_PREFIXES ?= $(if $(PYENV_DIR),$(sort $(wildcard $(PYENV_DIR)/versions/3.*)))
PY_LIB_SRC := $(sort $(call rwildcard,lib/py,%.c)) $(addprefix lib/util/,alloc.c arena.c grow.c hashtab.c intern.c)

.PHONY: py-layouts
py-layouts:
	@$(if $(strip $(PY_PREFIXES)),:,echo "py-layouts: no CPython prefixes (no pyenv: PYENV_ROOT unset and no pyenv on PATH; set PY_PREFIXES): nothing regenerated")
	@set -e; for pre in $(PY_PREFIXES); do \
	  v=$$(basename $$pre); m=$$(echo $$v | cut -d. -f1-2); mi=$$(echo $$m | cut -d. -f2); \
	  case $$mi in 8|9|10|11|12|13) ;; *) continue ;; esac; \
	  inc=$$pre/include/python$$m; \
	  mkdir -p $(BUILD)/py; \
	  if [ $$mi -le 12 ]; then \
	    $(CC) -std=gnu11 -DPy_BUILD_CORE -I$$inc -I$$inc/internal scripts/pylayout/gen_layout.c -o $(BUILD)/py/gen_layout_$$mi; \
	    $(BUILD)/py/gen_layout_$$mi $$v > lib/py/generated/layout_3_$$mi.h; \
	    echo "py-layouts: lib/py/generated/layout_3_$$mi.h from $$v"; \
	  fi; \
	  $(CC) -std=gnu11 -DPy_BUILD_CORE -I$$inc -I$$inc/internal scripts/pylayout/gen_objects.c -o $(BUILD)/py/gen_objects_$$mi; \
	  $(BUILD)/py/gen_objects_$$mi $$v > lib/py/generated/objects_3_$$mi.h; \
	  echo "py-layouts: lib/py/generated/objects_3_$$mi.h from $$v"; \
	  $(CC) -std=gnu11 -DPy_BUILD_CORE -I$$inc -I$$inc/internal scripts/pylayout/gen_values.c -o $(BUILD)/py/gen_values_$$mi; \
	  $(BUILD)/py/gen_values_$$mi $$v > lib/py/generated/values_3_$$mi.h; \
	  echo "py-layouts: lib/py/generated/values_3_$$mi.h from $$v"; \
	  if [ $$mi -eq 13 ]; then \
	    $(CC) -std=gnu11 -DPy_BUILD_CORE -DPy_GIL_DISABLED -I$$inc -I$$inc/internal scripts/pylayout/gen_objects.c -o $(BUILD)/py/gen_objects_$${mi}t; \
	    $(BUILD)/py/gen_objects_$${mi}t $$v > lib/py/generated/objects_3_$${mi}t.h; \
	    echo "py-layouts: lib/py/generated/objects_3_$${mi}t.h from $$v with Py_GIL_DISABLED"; \
	    $(CC) -std=gnu11 -DPy_BUILD_CORE -DPy_GIL_DISABLED -I$$inc -I$$inc/internal scripts/pylayout/gen_values.c -o $(BUILD)/py/gen_values_$${mi}t; \
	    $(BUILD)/py/gen_values_$${mi}t $$v > lib/py/generated/values_3_$${mi}t.h; \
	    echo "py-layouts: lib/py/generated/values_3_$${mi}t.h from $$v with Py_GIL_DISABLED"; \
	  fi; \
	done

$(BUILD)/py/libpytest.so: tests/support/pyself/py_selftest_lib.c $(PY_LIB_SRC) $(wildcard lib/py/*.h) $(wildcard lib/util/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) $(CFLAGS_WARN) -shared -o $@ tests/support/pyself/py_selftest_lib.c $(PY_LIB_SRC) -pthread

$(BUILD)/tests/test_py_self: $(BUILD)/py/libpytest.so

$(BUILD)/py/py_walk_bench: bench/py_walk_bench.c $(LIBINTERNAL_A) $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBINTERNAL_A) $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(BUILD)/py/libpytest.so
BENCH_DEPS += $(BUILD)/py/py_walk_bench $(BUILD)/py/libpytest.so
