/*
 * mcapi.h: the Multicore Communications API, MCAPI 2.000 (Multicore Association), as Ferry
 * implements it in lib/libmcapi.so. Build programs with bin/mcapicc; docs/mcapi.md says how to
 * run them.
 *
 * Written for Ferry from the MCAPI 2.000 specification. Status codes and the other constants
 * the standard leaves to the header take the numeric values of the MCA 2.0.x reference headers,
 * with the few exceptions listed below; tests/mcapi/abi/check.sh pins every value. Clean as C89,
 * C99, C11, C17 and as C++98, C++11, C++17 with -Wall -Wextra -pedantic.
 *
 * Implementation-defined choices of Ferry
 * ---------------------------------------
 * Types
 *   mcapi_endpoint_t, mcapi_pktchan_send_hndl_t, mcapi_pktchan_recv_hndl_t,
 *   mcapi_sclchan_send_hndl_t, mcapi_sclchan_recv_hndl_t, mcapi_request_t
 *       opaque 32-bit scalars (uint32_t), compared with ==. A mcapi_request_t variable is
 *       storage that a non-blocking call writes a handle into; the library keeps the state.
 *   mcapi_timeout_t  unsigned int, in milliseconds; MCAPI_TIMEOUT_IMMEDIATE (0) never blocks,
 *       MCAPI_TIMEOUT_INFINITE (~0u) never times out.
 *   mcapi_param_t    struct mcapi_param; this version reads nothing from it, and a NULL
 *       pointer is accepted (zero it for later versions).
 *   mcapi_node_attributes_t  struct mcapi_node_attributes, holding MCAPI_NODE_ATTR_TYPE; fill
 *       it with mcapi_node_init_attributes and mcapi_node_set_attribute. NULL means defaults.
 *   impl_info_t      struct impl_info: the library's name and how the node found its peers.
 *   mcapi_status_t, mcapi_domain_t, mcapi_node_t, mcapi_port_t, mcapi_priority_t
 *       unsigned int.
 * Limits
 *   MCAPI_MAX_DOMAIN 0          one domain, 0, per job
 *   MCAPI_MAX_NODE 65535        node ids 0..65535
 *   MCAPI_MAX_PORT 65535        port ids 0..65535
 *   MCAPI_NUM_RESERVED_PORTS 0  no port is reserved; MCAPI_MIN_PORT is 0
 *   MCAPI_MAX_ENDPOINTS 1024    endpoints alive at once on one node
 *   MCAPI_MAX_REQUESTS 1024     requests outstanding at once on one node
 *   MCAPI_MAX_MSG_SIZE 1048576  bytes in one message (1 MiB)
 *   MCAPI_MAX_PKT_SIZE 1048576  bytes in one packet (1 MiB)
 *   MCAPI_MAX_PRIORITY 10       priorities 0 (most urgent, MCAPI_MAX_PRORITY) .. 10 (least)
 *   MCAPI_MAX_STATUS_SIZE 32    bytes mcapi_display_status needs for any name, NUL included
 *   MCAPI_BUF_ALIGN 64          alignment for buffers allocated at run time
 * Differences from the reference header, on purpose
 *   MCAPI_ERR_CHAN_CLOSEPENDING is a status of the specification that the reference header
 *   lacks; it takes the next free value, 46, and MCAPI_STATUSCODE_END moves to 47.
 *   MCAPI_ENDP_ATTR_STATUS_PKTCHAN, _SCLCHAN, _SEND and _RECEIVE are distinct bits here; the
 *   reference gives them the values of _CONNECTED, _OPEN, _OPEN_PENDING and _CLOSE_PENDING,
 *   which makes the status word ambiguous.
 *   Both spellings of the size errors exist: the specification's MCAPI_ERR_MSG_SIZE and
 *   MCAPI_ERR_PKT_SIZE, and the reference's MCAPI_ERR_MSG_LIMIT and MCAPI_ERR_PKT_LIMIT, with
 *   one value each.
 *   The all-ones constants (MCAPI_PORT_ANY, MCAPI_TIMEOUT_INFINITE, MCAPI_NODE_INVALID,
 *   MCAPI_DOMAIN_INVALID, MCAPI_RETURN_VALUE_INVALID) are written ~0u, not ~0: the same value
 *   in the unsigned types they are compared with, without a signed/unsigned warning.
 *   mcapi_wait_any takes mcapi_request_t** (an array of pointers to requests), as the reference
 *   header and later revisions of the specification do; the 2.000 text shows mcapi_request_t*.
 */
#ifndef FERRY_MCAPI_H
#define FERRY_MCAPI_H

#include <stddef.h>
#include <stdint.h>

#include "mca.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ------------------------------------------------------------------------------- */

typedef mca_int_t mcapi_int_t;
typedef mca_int8_t mcapi_int8_t;
typedef mca_int16_t mcapi_int16_t;
typedef mca_int32_t mcapi_int32_t;
typedef mca_int64_t mcapi_int64_t;
typedef mca_uint_t mcapi_uint_t;
typedef mca_uint8_t mcapi_uint8_t;
typedef mca_uint16_t mcapi_uint16_t;
typedef mca_uint32_t mcapi_uint32_t;
typedef mca_uint64_t mcapi_uint64_t;
typedef mca_boolean_t mcapi_boolean_t;
typedef mca_domain_t mcapi_domain_t;
typedef mca_node_t mcapi_node_t;
typedef unsigned int mcapi_port_t;
typedef mca_status_t mcapi_status_t;
typedef mca_timeout_t mcapi_timeout_t;
typedef unsigned int mcapi_priority_t;
typedef mca_request_t mcapi_request_t;

typedef uint32_t mcapi_endpoint_t;
typedef uint32_t mcapi_pktchan_send_hndl_t;
typedef uint32_t mcapi_pktchan_recv_hndl_t;
typedef uint32_t mcapi_sclchan_send_hndl_t;
typedef uint32_t mcapi_sclchan_recv_hndl_t;

/* Initialization parameters. Nothing in it is read yet. */
typedef struct mcapi_param {
    mcapi_uint_t reserved[4];
} mcapi_param_t;

/* Node attributes for mcapi_initialize, see MCAPI_NODE_ATTR_*. */
typedef struct mcapi_node_attributes {
    mcapi_uint_t type;
    mcapi_uint_t reserved[3];
} mcapi_node_attributes_t;

/* What mcapi_info_t.impl_info points to: storage of the library, valid until mcapi_finalize. */
typedef struct impl_info {
    const char *library;   /* "Ferry <version>" */
    mcapi_uint_t launch;   /* FERRY_MCAPI_LAUNCH_*: how this node found its peers */
} impl_info_t;

#define FERRY_MCAPI_LAUNCH_JOB 1        /* started by `ferry run` */
#define FERRY_MCAPI_LAUNCH_RENDEZVOUS 2 /* by hand, peers met in FERRY_MCAPI_RENDEZVOUS */
#define FERRY_MCAPI_LAUNCH_HOSTS 3      /* by hand, peers listed in FERRY_MCAPI_HOSTS */

/* ---- Constants the standard fixes --------------------------------------------------------- */

#define MCAPI_VERSION 2000 /* 2.000: major, then the minor number in three digits */
#define MCAPI_TRUE MCA_TRUE
#define MCAPI_FALSE MCA_FALSE
#define MCAPI_NULL MCA_NULL
#define MCAPI_PORT_ANY (~0u)
#define MCAPI_TIMEOUT_INFINITE (~0u)
#define MCAPI_TIMEOUT_IMMEDIATE 0
#define MCAPI_INFINITE MCAPI_TIMEOUT_INFINITE /* the name the specification's text uses */
#define MCAPI_NODE_INVALID (~0u)
#define MCAPI_DOMAIN_INVALID (~0u)
#define MCAPI_RETURN_VALUE_INVALID (~0u)
#define MCAPI_MAX_PRORITY 0 /* sic: the standard's name for the most urgent priority */
#define MCAPI_MAX_STATUS_SIZE 32
#define MCAPI_MAX_STATUS_MSG_LEN MCAPI_MAX_STATUS_SIZE

/* ---- Implementation-defined limits (see the table at the top) ----------------------------- */

#define MCAPI_MAX_DOMAIN 0
#define MCAPI_MAX_NODE 65535
#define MCAPI_MAX_PORT 65535
#define MCAPI_NUM_RESERVED_PORTS 0
#define MCAPI_MIN_PORT MCAPI_NUM_RESERVED_PORTS
#define MCAPI_MAX_ENDPOINTS 1024
#define MCAPI_MAX_REQUESTS 1024
#define MCAPI_MAX_MSG_SIZE 1048576
#define MCAPI_MAX_PKT_SIZE 1048576
#define MCAPI_MAX_MESSAGE_SIZE MCAPI_MAX_MSG_SIZE
#define MCAPI_MAX_PACKET_SIZE MCAPI_MAX_PKT_SIZE
#define MCAPI_MAX_PRIORITY 10

/* ---- Status codes ------------------------------------------------------------------------- */

enum mcapi_status_codes {
    MCAPI_SUCCESS = 1,
    MCAPI_PENDING = 2,
    MCAPI_TIMEOUT = 3,
    MCAPI_ERR_PARAMETER = 4,
    MCAPI_ERR_DOMAIN_INVALID = 5,
    MCAPI_ERR_NODE_INVALID = 6,
    MCAPI_ERR_NODE_INITFAILED = 7,
    MCAPI_ERR_NODE_INITIALIZED = 8,
    MCAPI_ERR_NODE_NOTINIT = 9,
    MCAPI_ERR_NODE_FINALFAILED = 10,
    MCAPI_ERR_PORT_INVALID = 11,
    MCAPI_ERR_ENDP_INVALID = 12,
    MCAPI_ERR_ENDP_EXISTS = 13,
    MCAPI_ERR_ENDP_GET_LIMIT = 14,
    MCAPI_ERR_ENDP_DELETED = 15,
    MCAPI_ERR_ENDP_NOTOWNER = 16,
    MCAPI_ERR_ENDP_REMOTE = 17,
    MCAPI_ERR_ENDP_NOPORTS = 18,
    MCAPI_ERR_ENDP_LIMIT = 19,
    MCAPI_ERR_ATTR_INCOMPATIBLE = 20,
    MCAPI_ERR_ATTR_SIZE = 21,
    MCAPI_ERR_ATTR_NUM = 22,
    MCAPI_ERR_ATTR_VALUE = 23,
    MCAPI_ERR_ATTR_NOTSUPPORTED = 24,
    MCAPI_ERR_ATTR_READONLY = 25,
    MCAPI_ERR_MSG_LIMIT = 26,
    MCAPI_ERR_MSG_SIZE = MCAPI_ERR_MSG_LIMIT,
    MCAPI_ERR_MSG_TRUNCATED = 27,
    MCAPI_ERR_CHAN_OPEN = 28,
    MCAPI_ERR_CHAN_TYPE = 29,
    MCAPI_ERR_CHAN_DIRECTION = 30,
    MCAPI_ERR_CHAN_CONNECTED = 31,
    MCAPI_ERR_CHAN_OPENPENDING = 32,
    MCAPI_ERR_CHAN_NOTOPEN = 33,
    MCAPI_ERR_CHAN_INVALID = 34,
    MCAPI_ERR_PKT_LIMIT = 35,
    MCAPI_ERR_PKT_SIZE = MCAPI_ERR_PKT_LIMIT,
    MCAPI_ERR_SCL_SIZE = 36,
    MCAPI_ERR_TRANSMISSION = 37,
    MCAPI_ERR_PRIORITY = 38,
    MCAPI_ERR_BUF_INVALID = 39,
    MCAPI_ERR_MEM_LIMIT = 40,
    MCAPI_ERR_REQUEST_INVALID = 41,
    MCAPI_ERR_REQUEST_LIMIT = 42,
    MCAPI_ERR_REQUEST_CANCELLED = 43,
    MCAPI_ERR_WAIT_PENDING = 44,
    MCAPI_ERR_GENERAL = 45,
    MCAPI_ERR_CHAN_CLOSEPENDING = 46,
    MCAPI_STATUSCODE_END = 47
};

/* ---- Node attributes ---------------------------------------------------------------------- */

enum mcapi_node_attribute_numbers {
    MCAPI_NODE_ATTR_TYPE = 0, /* mcapi_node_attr_type_t */
    MCAPI_NODE_ATTR_END = 1
};

typedef mcapi_uint_t mcapi_node_attr_type_t;

enum mcapi_node_attribute_types {
    MCAPI_NODE_ATTR_TYPE_REGULAR = 0, /* the default */
    MCAPI_NODE_ATTR_TYPE_END = 1
};

/* ---- Endpoint attributes ------------------------------------------------------------------ */

/* "compat." marks channel compatibility attributes: both ends of a channel must agree. */
enum mcapi_endp_attribute_numbers {
    MCAPI_ENDP_ATTR_TYPE = 0,             /* mcapi_endp_attr_type_t */
    MCAPI_ENDP_ATTR_GET_COUNT = 1,        /* mcapi_endp_attr_get_count_t, read only */
    MCAPI_ENDP_ATTR_GET_SOURCE = 2,       /* mcapi_endp_attr_get_source_t, read only */
    MCAPI_ENDP_ATTR_MAX_PAYLOAD_SIZE = 3, /* mcapi_endp_attr_max_payload_size_t, compat. */
    MCAPI_ENDP_ATTR_BUFFER_TYPE = 4,      /* mcapi_endp_attr_buffer_type_t, compat. */
    MCAPI_ENDP_ATTR_MEMORY_TYPE = 5,      /* mcapi_endp_attr_memory_type_t, compat. */
    MCAPI_ENDP_ATTR_NUM_PRIORITIES = 6,   /* mcapi_endp_attr_num_priorities_t, compat. */
    MCAPI_ENDP_ATTR_PRIORITY = 7,         /* mcapi_endp_attr_priority_t, compat. */
    MCAPI_ENDP_ATTR_NUM_SEND_BUFFERS = 8, /* mcapi_endp_attr_num_send_buffers_t, read only */
    MCAPI_ENDP_ATTR_NUM_RECV_BUFFERS = 9, /* mcapi_endp_attr_num_recv_buffers_t, read only */
    MCAPI_ENDP_ATTR_ENDP_STATUS = 10,     /* mcapi_endp_attr_status_t, read only */
    MCAPI_ENDP_ATTR_TIMEOUT = 11,         /* mcapi_endp_attr_timeout_t */
    MCAPI_ENDP_ATTR_END = 12
};

typedef mcapi_uint_t mcapi_endp_attr_type_t;
#define MCAPI_ENDP_ATTR_TYPE_MESSAGE 0x00000001 /* the default */
#define MCAPI_ENDP_ATTR_TYPE_PKTCHAN 0x00000002
#define MCAPI_ENDP_ATTR_TYPE_SCLCHAN 0x00000004

typedef mcapi_uint_t mcapi_endp_attr_get_count_t;

typedef struct {
    mcapi_domain_t domain_id; /* MCAPI_DOMAIN_INVALID until a get */
    mcapi_node_t node_id;     /* MCAPI_NODE_INVALID until a get */
} mcapi_endp_attr_get_source_t;

typedef mcapi_int_t mcapi_endp_attr_max_payload_size_t;

typedef mcapi_uint_t mcapi_endp_attr_buffer_type_t;
enum mcapi_buffer_type {
    MCAPI_ENDP_ATTR_FIFO_BUFFER = 0 /* the default and only type */
};

/* Locality in the low 16 bits, behaviour at the memory limit in the high 16 bits. */
typedef mcapi_uint_t mcapi_endp_attr_memory_type_t;
enum mcapi_memory_type {
    MCAPI_ENDP_ATTR_LOCAL_MEMORY = 0, /* the default */
    MCAPI_ENDP_ATTR_SHARED_MEMORY = 1,
    MCAPI_ENDP_ATTR_REMOTE_MEMORY = 2
};
#define MCAPI_ENDP_ATTR_BLOCK_ON_MEM_LIMIT 0x00000000 /* the default */
#define MCAPI_ENDP_ATTR_FAIL_ON_MEM_LIMIT 0x00010000

typedef mcapi_int_t mcapi_endp_attr_num_priorities_t;
typedef mcapi_uint_t mcapi_endp_attr_priority_t; /* default MCAPI_MAX_PRORITY (0) */
typedef mcapi_int_t mcapi_endp_attr_num_send_buffers_t;
typedef mcapi_uint_t mcapi_endp_attr_num_recv_buffers_t;

/* Status flags: the low 16 bits are the standard's, the high 16 bits the implementation's. */
typedef mcapi_uint_t mcapi_endp_attr_status_t;
#define MCAPI_ENDP_ATTR_STATUS_CONNECTED 0x00000001
#define MCAPI_ENDP_ATTR_STATUS_OPEN 0x00000002
#define MCAPI_ENDP_ATTR_STATUS_OPEN_PENDING 0x00000004
#define MCAPI_ENDP_ATTR_STATUS_CLOSE_PENDING 0x00000008
#define MCAPI_ENDP_ATTR_STATUS_GET_PENDING 0x00000010
#define MCAPI_ENDP_ATTR_STATUS_PKTCHAN 0x00000020
#define MCAPI_ENDP_ATTR_STATUS_SCLCHAN 0x00000040
#define MCAPI_ENDP_ATTR_STATUS_SEND 0x00000080
#define MCAPI_ENDP_ATTR_STATUS_RECEIVE 0x00000100

/* Timeout of the blocking sends and receives on the endpoint; default MCAPI_TIMEOUT_INFINITE. */
typedef mcapi_timeout_t mcapi_endp_attr_timeout_t;

/* Attribute numbers 0..63 belong to the MCA; organizations get ranges of 32 above them. */
#define MCAPI_MAX_NUM_ENDP_ATTRS_MCA 64
#define MCAPI_MAX_NUM_ENDP_ATTRS_OTHER 32
#define mcapi_start_endp_attribute(x) \
    (MCAPI_MAX_NUM_ENDP_ATTRS_MCA + (x) * MCAPI_MAX_NUM_ENDP_ATTRS_OTHER)
#define mcapi_end_endp_attribute(x) \
    (MCAPI_MAX_NUM_ENDP_ATTRS_MCA + ((x) + 1) * MCAPI_MAX_NUM_ENDP_ATTRS_OTHER)

typedef struct {
    mcapi_uint_t organization_id;
    mcapi_uint_t start_endp_attr_num;
    mcapi_uint_t end_endp_attr_num;
} mcapi__endp_attr_range_t; /* sic: the reference's name */

/* ---- Initialization information ----------------------------------------------------------- */

typedef struct {
    mcapi_uint_t mcapi_version;          /* MCAPI_VERSION */
    mcapi_uint_t organization_id;        /* MCA_ORG_ID_TBA: Ferry has no id of its own */
    mcapi_uint_t implementation_version; /* Ferry's version, major * 1000 + minor */
    mcapi_uint_t number_of_domains;      /* 1 */
    mcapi_uint_t number_of_nodes;        /* nodes of the job (FERRY_SIZE) */
    mcapi_uint_t number_of_ports;        /* endpoints this node may still create */
    impl_info_t *impl_info;
} mcapi_info_t;

/* ---- Parameter markers and alignment ------------------------------------------------------ */

#ifndef MCAPI_IN
#define MCAPI_IN const
#endif
#ifndef MCAPI_OUT
#define MCAPI_OUT
#endif

#ifndef MCAPI_DECL_ALIGNED
#define MCAPI_DECL_ALIGNED MCA_DECL_ALIGNED
#endif
#ifndef MCAPI_BUF_ALIGN
#define MCAPI_BUF_ALIGN 64
#endif

/* ---- General ------------------------------------------------------------------------------ */

void mcapi_initialize(
    MCAPI_IN mcapi_domain_t domain_id,
    MCAPI_IN mcapi_node_t node_id,
    MCAPI_IN mcapi_node_attributes_t* mcapi_node_attributes,
    MCAPI_IN mcapi_param_t* mcapi_parameters,
    MCAPI_OUT mcapi_info_t* mcapi_info,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_finalize(
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_domain_t mcapi_domain_id_get(
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_node_t mcapi_node_id_get(
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_node_init_attributes(
    MCAPI_OUT mcapi_node_attributes_t* mcapi_node_attributes,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_node_set_attribute(
    MCAPI_OUT mcapi_node_attributes_t* mcapi_node_attributes,
    MCAPI_IN mcapi_uint_t attribute_num,
    MCAPI_IN void* attribute,
    MCAPI_IN size_t attribute_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_node_get_attribute(
    MCAPI_IN mcapi_domain_t domain_id,
    MCAPI_IN mcapi_node_t node_id,
    MCAPI_IN mcapi_uint_t attribute_num,
    MCAPI_OUT void* attribute,
    MCAPI_IN size_t attribute_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Endpoints ---------------------------------------------------------------------------- */

mcapi_endpoint_t mcapi_endpoint_create(
    MCAPI_IN mcapi_port_t port_id,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_endpoint_get_i(
    MCAPI_IN mcapi_domain_t domain_id,
    MCAPI_IN mcapi_node_t node_id,
    MCAPI_IN mcapi_port_t port_id,
    MCAPI_OUT mcapi_endpoint_t* endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_endpoint_t mcapi_endpoint_get(
    MCAPI_IN mcapi_domain_t domain_id,
    MCAPI_IN mcapi_node_t node_id,
    MCAPI_IN mcapi_port_t port_id,
    MCAPI_IN mcapi_timeout_t timeout,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_endpoint_delete(
    MCAPI_IN mcapi_endpoint_t endpoint,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_endpoint_get_attribute(
    MCAPI_IN mcapi_endpoint_t endpoint,
    MCAPI_IN mcapi_uint_t attribute_num,
    MCAPI_OUT void* attribute,
    MCAPI_IN size_t attribute_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* The specification writes the attribute as "MCAPI_IN const void*"; MCAPI_IN already adds the
 * const, and a second one is an error in C89 and C++. */
void mcapi_endpoint_set_attribute(
    MCAPI_IN mcapi_endpoint_t endpoint,
    MCAPI_IN mcapi_uint_t attribute_num,
    MCAPI_IN void* attribute,
    MCAPI_IN size_t attribute_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Messages ----------------------------------------------------------------------------- */

void mcapi_msg_send_i(
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_IN void* buffer,
    MCAPI_IN size_t buffer_size,
    MCAPI_IN mcapi_priority_t priority,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_msg_send(
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_IN void* buffer,
    MCAPI_IN size_t buffer_size,
    MCAPI_IN mcapi_priority_t priority,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_msg_recv_i(
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT void* buffer,
    MCAPI_IN size_t buffer_size,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_msg_recv(
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT void* buffer,
    MCAPI_IN size_t buffer_size,
    MCAPI_OUT size_t* received_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint_t mcapi_msg_available(
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Packet channels ---------------------------------------------------------------------- */

void mcapi_pktchan_connect_i(
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_recv_open_i(
    MCAPI_OUT mcapi_pktchan_recv_hndl_t* receive_handle,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_send_open_i(
    MCAPI_OUT mcapi_pktchan_send_hndl_t* send_handle,
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_send_i(
    MCAPI_IN mcapi_pktchan_send_hndl_t send_handle,
    MCAPI_IN void* buffer,
    MCAPI_IN size_t size,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_send(
    MCAPI_IN mcapi_pktchan_send_hndl_t send_handle,
    MCAPI_IN void* buffer,
    MCAPI_IN size_t size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* The size of the packet comes from the mcapi_test/mcapi_wait/mcapi_wait_any that completes
 * the request. */
void mcapi_pktchan_recv_i(
    MCAPI_IN mcapi_pktchan_recv_hndl_t receive_handle,
    MCAPI_OUT void** buffer,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_recv(
    MCAPI_IN mcapi_pktchan_recv_hndl_t receive_handle,
    MCAPI_OUT void** buffer,
    MCAPI_OUT size_t* received_size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint_t mcapi_pktchan_available(
    MCAPI_IN mcapi_pktchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_release(
    MCAPI_IN void* buffer,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_boolean_t mcapi_pktchan_release_test(
    MCAPI_IN void* buffer,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_recv_close_i(
    MCAPI_IN mcapi_pktchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_pktchan_send_close_i(
    MCAPI_IN mcapi_pktchan_send_hndl_t send_handle,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Scalar channels ---------------------------------------------------------------------- */

void mcapi_sclchan_connect_i(
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_recv_open_i(
    MCAPI_OUT mcapi_sclchan_recv_hndl_t* receive_handle,
    MCAPI_IN mcapi_endpoint_t receive_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_open_i(
    MCAPI_OUT mcapi_sclchan_send_hndl_t* send_handle,
    MCAPI_IN mcapi_endpoint_t send_endpoint,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_uint64(
    MCAPI_IN mcapi_sclchan_send_hndl_t send_handle,
    MCAPI_IN mcapi_uint64_t dataword,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_uint32(
    MCAPI_IN mcapi_sclchan_send_hndl_t send_handle,
    MCAPI_IN mcapi_uint32_t dataword,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_uint16(
    MCAPI_IN mcapi_sclchan_send_hndl_t send_handle,
    MCAPI_IN mcapi_uint16_t dataword,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_uint8(
    MCAPI_IN mcapi_sclchan_send_hndl_t send_handle,
    MCAPI_IN mcapi_uint8_t dataword,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint64_t mcapi_sclchan_recv_uint64(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint32_t mcapi_sclchan_recv_uint32(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint16_t mcapi_sclchan_recv_uint16(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint8_t mcapi_sclchan_recv_uint8(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_uint_t mcapi_sclchan_available(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_recv_close_i(
    MCAPI_IN mcapi_sclchan_recv_hndl_t receive_handle,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_sclchan_send_close_i(
    MCAPI_IN mcapi_sclchan_send_hndl_t send_handle,
    MCAPI_OUT mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Non-blocking operations -------------------------------------------------------------- */

mcapi_boolean_t mcapi_test(
    MCAPI_IN mcapi_request_t* request,
    MCAPI_OUT size_t* size,
    MCAPI_OUT mcapi_status_t* mcapi_status);

mcapi_boolean_t mcapi_wait(
    MCAPI_IN mcapi_request_t* request,
    MCAPI_OUT size_t* size,
    MCAPI_IN mcapi_timeout_t timeout,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* Returns the index in requests[] of a completed (or cancelled) request, or
 * MCAPI_RETURN_VALUE_INVALID with the reason in *mcapi_status. */
mcapi_uint_t mcapi_wait_any(
    MCAPI_IN size_t number,
    mcapi_request_t** requests,
    MCAPI_OUT size_t* size,
    MCAPI_IN mcapi_timeout_t timeout,
    MCAPI_OUT mcapi_status_t* mcapi_status);

void mcapi_cancel(
    MCAPI_IN mcapi_request_t* request,
    MCAPI_OUT mcapi_status_t* mcapi_status);

/* ---- Support ------------------------------------------------------------------------------ */

/* Writes the name of the status code (for example "MCAPI_ERR_PORT_INVALID") into
 * status_message, cut to size - 1 characters and NUL terminated, and returns status_message;
 * returns NULL for a code that is not a status or a buffer that cannot hold one character. */
char* mcapi_display_status(
    MCAPI_IN mcapi_status_t mcapi_status,
    MCAPI_OUT char* status_message,
    MCAPI_IN size_t size);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_MCAPI_H */
