// Stand-in for the kernel's <drm/drm.h>, used only where the system has none (Debian ships <linux/kfd_ioctl.h> in
// linux-libc-dev but the DRM uapi headers only inside libdrm-dev, as <libdrm/drm.h>). <linux/kfd_ioctl.h> includes
// <drm/drm.h> for nothing but the __u32/__u64 types and the _IOR/_IOW/_IOWR macros, which these two provide.
// kernel-interface/CMakeLists.txt adds this folder to the include path only when <drm/drm.h> is missing.
#pragma once
#include <linux/ioctl.h>
#include <linux/types.h>
