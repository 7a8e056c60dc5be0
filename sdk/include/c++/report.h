/* report.h (Landslide guest SDK, C++): the C header, its functions with C linkage. */
#ifndef _LS_CXX_REPORT_H
#define _LS_CXX_REPORT_H
extern "C" {
#include_next <report.h>
}
#endif
