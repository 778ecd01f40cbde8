# shellcheck shell=bash disable=SC2034
# vicodec, the kernel's virtual stateful/stateless FWHT codec, with the mem2mem framework it needs, as one
# module: Debian builds neither (CONFIG_VIDEO_VICODEC and CONFIG_V4L2_MEM2MEM_DEV are unset).
module=vicodec
sources="drivers/media/test-drivers/vicodec/vicodec-core.c drivers/media/test-drivers/vicodec/codec-fwht.c
 drivers/media/test-drivers/vicodec/codec-fwht.h drivers/media/test-drivers/vicodec/codec-v4l2-fwht.c
 drivers/media/test-drivers/vicodec/codec-v4l2-fwht.h drivers/media/v4l2-core/v4l2-mem2mem.c"
objects="vicodec-core.o codec-fwht.o codec-v4l2-fwht.o v4l2-mem2mem.o"

patch_sources() {
    # Both files declare a module parameter "debug"; in one module insmod then fails with "File exists".
    sed -i 's/^module_param(debug, bool, 0644);/module_param_named(m2m_debug, debug, bool, 0644);/' v4l2-mem2mem.c
    grep -q '^module_param_named(m2m_debug, debug, bool, 0644);' v4l2-mem2mem.c \
        || die "v4l2-mem2mem.c did not take the m2m_debug rename (kernel source changed?)"
}
