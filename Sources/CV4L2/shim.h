#ifndef KIOSKCAM_CV4L2_SHIM_H
#define KIOSKCAM_CV4L2_SHIM_H
#include <linux/videodev2.h>
#include <libv4l2.h>
#include <sys/mman.h>

// VIDIOC_* are _IOR/_IOWR(...) macros: Swift cannot import them.
static inline unsigned long CV4L2_VIDIOC_QUERYCAP(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long CV4L2_VIDIOC_ENUM_FMT(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES(void) { return VIDIOC_ENUM_FRAMESIZES; }
static inline unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS(void) { return VIDIOC_ENUM_FRAMEINTERVALS; }
static inline unsigned long CV4L2_VIDIOC_G_FMT(void) { return VIDIOC_G_FMT; }
static inline unsigned long CV4L2_VIDIOC_S_FMT(void) { return VIDIOC_S_FMT; }
static inline unsigned long CV4L2_VIDIOC_G_PARM(void) { return VIDIOC_G_PARM; }
static inline unsigned long CV4L2_VIDIOC_S_PARM(void) { return VIDIOC_S_PARM; }
static inline unsigned long CV4L2_VIDIOC_REQBUFS(void) { return VIDIOC_REQBUFS; }
static inline unsigned long CV4L2_VIDIOC_QUERYBUF(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long CV4L2_VIDIOC_QBUF(void) { return VIDIOC_QBUF; }
static inline unsigned long CV4L2_VIDIOC_DQBUF(void) { return VIDIOC_DQBUF; }
static inline unsigned long CV4L2_VIDIOC_STREAMON(void) { return VIDIOC_STREAMON; }
static inline unsigned long CV4L2_VIDIOC_STREAMOFF(void) { return VIDIOC_STREAMOFF; }
static inline unsigned long CV4L2_VIDIOC_ENUMINPUT(void) { return VIDIOC_ENUMINPUT; }
static inline unsigned long CV4L2_VIDIOC_G_INPUT(void) { return VIDIOC_G_INPUT; }
static inline unsigned long CV4L2_VIDIOC_QUERYCTRL(void) { return VIDIOC_QUERYCTRL; }
static inline unsigned long CV4L2_VIDIOC_G_CTRL(void) { return VIDIOC_G_CTRL; }
static inline unsigned long CV4L2_VIDIOC_S_CTRL(void) { return VIDIOC_S_CTRL; }
static inline unsigned long CV4L2_VIDIOC_ENCODER_CMD(void) { return VIDIOC_ENCODER_CMD; }
static inline unsigned long CV4L2_VIDIOC_DECODER_CMD(void) { return VIDIOC_DECODER_CMD; }
static inline unsigned long CV4L2_VIDIOC_SUBSCRIBE_EVENT(void) { return VIDIOC_SUBSCRIBE_EVENT; }
static inline unsigned long CV4L2_VIDIOC_DQEVENT(void) { return VIDIOC_DQEVENT; }
static inline unsigned long CV4L2_VIDIOC_G_SELECTION(void) { return VIDIOC_G_SELECTION; }
static inline unsigned long CV4L2_VIDIOC_S_SELECTION(void) { return VIDIOC_S_SELECTION; }

// V4L2_PIX_FMT_* are built by the v4l2_fourcc() macro: Swift cannot import them.
static inline unsigned int CV4L2_PIX_FMT_YUYV(void) { return V4L2_PIX_FMT_YUYV; }
static inline unsigned int CV4L2_PIX_FMT_NV12(void) { return V4L2_PIX_FMT_NV12; }
static inline unsigned int CV4L2_PIX_FMT_MJPEG(void) { return V4L2_PIX_FMT_MJPEG; }
static inline unsigned int CV4L2_PIX_FMT_YUV420(void) { return V4L2_PIX_FMT_YUV420; }
static inline unsigned int CV4L2_PIX_FMT_H264(void) { return V4L2_PIX_FMT_H264; }
static inline unsigned int CV4L2_PIX_FMT_FWHT(void) { return V4L2_PIX_FMT_FWHT; }

// V4L2_CID_* are sums of class bases: spelled once here rather than copied into Swift.
static inline unsigned int CV4L2_CID_EXPOSURE_ABSOLUTE(void) { return V4L2_CID_EXPOSURE_ABSOLUTE; }
static inline unsigned int CV4L2_CID_GAIN(void) { return V4L2_CID_GAIN; }
static inline unsigned int CV4L2_CID_ZOOM_ABSOLUTE(void) { return V4L2_CID_ZOOM_ABSOLUTE; }
static inline unsigned int CV4L2_CID_ZOOM_RELATIVE(void) { return V4L2_CID_ZOOM_RELATIVE; }
static inline unsigned int CV4L2_CID_ZOOM_CONTINUOUS(void) { return V4L2_CID_ZOOM_CONTINUOUS; }
static inline unsigned int CV4L2_CID_MPEG_VIDEO_GOP_SIZE(void) { return V4L2_CID_MPEG_VIDEO_GOP_SIZE; }
static inline unsigned int CV4L2_CID_MPEG_VIDEO_BITRATE(void) { return V4L2_CID_MPEG_VIDEO_BITRATE; }
static inline unsigned int CV4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME(void) { return V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME; }
static inline unsigned int CV4L2_CID_MIN_BUFFERS_FOR_CAPTURE(void) { return V4L2_CID_MIN_BUFFERS_FOR_CAPTURE; }
static inline unsigned int CV4L2_CID_MPEG_VIDEO_H264_PROFILE(void) { return V4L2_CID_MPEG_VIDEO_H264_PROFILE; }
static inline unsigned int CV4L2_CID_MPEG_VIDEO_H264_I_PERIOD(void) { return V4L2_CID_MPEG_VIDEO_H264_I_PERIOD; }

// v4l2_ioctl is variadic: Swift marks it unavailable. (Devices are opened with open(2) and v4l2_fd_open.)
static inline int CV4L2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }

#endif
