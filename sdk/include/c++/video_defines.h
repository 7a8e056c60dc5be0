/* video_defines.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_VIDEO_DEFINES_H
#define _LS_CXX_VIDEO_DEFINES_H
extern "C" {
#include_next <video_defines.h>
}
#endif
