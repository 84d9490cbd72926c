/*
 * mca.h: the definitions that the Multicore Association's APIs share (MCA 2.0), as Ferry
 * provides them for its MCAPI library. mcapi.h includes this file; MCAPI programs need not.
 *
 * Written for Ferry from the MCAPI 2.000 specification; numeric values agree with the MCA 2.0.x
 * reference headers (tests/mcapi/abi/check.sh pins them). Clean as C89 and later and as C++98
 * and later. The fixed-width types come from <stdint.h>, so mca_uint64_t is 64 bits wide
 * without the `long long` that C89 lacks.
 */
#ifndef FERRY_MCA_H
#define FERRY_MCA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int mca_int_t;
typedef int8_t mca_int8_t;
typedef int16_t mca_int16_t;
typedef int32_t mca_int32_t;
typedef int64_t mca_int64_t;
typedef unsigned int mca_uint_t;
typedef uint8_t mca_uint8_t;
typedef uint16_t mca_uint16_t;
typedef uint32_t mca_uint32_t;
typedef uint64_t mca_uint64_t;
typedef unsigned char mca_boolean_t;
typedef unsigned int mca_node_t;
typedef unsigned int mca_status_t;
typedef unsigned int mca_timeout_t;
typedef unsigned int mca_domain_t;
/* A request is an opaque 32-bit handle; a variable of this type is storage that a non-blocking
 * call writes a handle into. */
typedef uint32_t mca_request_t;

#define MCA_TRUE 1
#define MCA_FALSE 0
#define MCA_NULL 0
#define MCA_INFINITE (~0u)
#define MCA_RETURN_VALUE_INVALID (~0u)
#define MCA_NODE_INVALID (~0u)
#define MCA_DOMAIN_INVALID (~0u)

/* Parameter direction markers. An input pointer becomes a pointer to const. */
#ifndef MCA_IN
#define MCA_IN const
#endif
#ifndef MCA_OUT
#define MCA_OUT
#endif

/* Placed on a static declaration to align the object for the fastest transfers. */
#if defined(__GNUC__)
#define MCA_DECL_ALIGNED __attribute__((aligned(32)))
#else
#define MCA_DECL_ALIGNED
#endif

/* Organization ids the MCA assigned, for vendor attribute ranges. Ferry has none of its own
 * and reports MCA_ORG_ID_TBA. */
#define MCA_ORG_ID_PSI 0
#define MCA_ORG_ID_FSL 1
#define MCA_ORG_ID_MGC 2
#define MCA_ORG_ID_TBA 3

#ifdef __cplusplus
}
#endif

#endif /* FERRY_MCA_H */
