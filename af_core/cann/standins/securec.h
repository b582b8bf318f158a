/*
 * Stand-in for securec.h, the bounds-checked C string library that the CANN metadef headers include
 * (continuous_vector.h, tiling_data.h, tilingdata_base.h, ...). It is not part of the CANN API and not
 * in the metadef snapshot; a type check needs only its declarations. Declared here: the functions the
 * metadef headers call (memcpy_s, memset_s, strcpy_s, vsnprintf_s), errno_t, EOK and
 * SECUREC_MEM_MAX_LEN. Nothing of the CANN API is declared here.
 */
#ifndef AF_CANN_STANDIN_SECUREC_H
#define AF_CANN_STANDIN_SECUREC_H

#include <stdarg.h>
#include <stddef.h>

#ifndef EOK
#define EOK 0
#endif

#ifndef SECUREC_MEM_MAX_LEN
#define SECUREC_MEM_MAX_LEN 0x7fffffffUL
#endif

typedef int errno_t;

#ifdef __cplusplus
extern "C" {
#endif

errno_t memcpy_s(void *dest, size_t destMax, const void *src, size_t count);
errno_t memset_s(void *dest, size_t destMax, int c, size_t count);
errno_t strcpy_s(char *strDest, size_t destMax, const char *strSrc);
int vsnprintf_s(char *strDest, size_t destMax, size_t count, const char *format, va_list argList);

#ifdef __cplusplus
}
#endif

#endif /* AF_CANN_STANDIN_SECUREC_H */
