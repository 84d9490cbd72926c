/*
 * The signature of every function include/mcapi.h declares, written out once from the MCAPI
 * 2.000 specification (its MCAPI_IN spelled as const, MCAPI_OUT as nothing). check.sh compiles
 * this file against the header as C, with incompatible pointer conversions as errors, and as
 * C++, so a prototype that differs in any parameter type or qualifier fails to build; it also
 * requires the SIG lines to name exactly the functions the header declares.
 */
#include <mcapi.h>

#if defined(__cplusplus)
#define SIG(ret, name, params)                                                                 \
    extern ret (*const check_##name) params;                                                   \
    ret (*const check_##name) params = name;
#else
#define SIG(ret, name, params) ret (*const check_##name) params = name;
#endif

/* General */
SIG(void, mcapi_initialize, (mcapi_domain_t, mcapi_node_t, const mcapi_node_attributes_t *, const mcapi_param_t *, mcapi_info_t *, mcapi_status_t *))
SIG(void, mcapi_finalize, (mcapi_status_t *))
SIG(mcapi_domain_t, mcapi_domain_id_get, (mcapi_status_t *))
SIG(mcapi_node_t, mcapi_node_id_get, (mcapi_status_t *))
SIG(void, mcapi_node_init_attributes, (mcapi_node_attributes_t *, mcapi_status_t *))
SIG(void, mcapi_node_set_attribute, (mcapi_node_attributes_t *, mcapi_uint_t, const void *, size_t, mcapi_status_t *))
SIG(void, mcapi_node_get_attribute, (mcapi_domain_t, mcapi_node_t, mcapi_uint_t, void *, size_t, mcapi_status_t *))
/* Endpoints */
SIG(mcapi_endpoint_t, mcapi_endpoint_create, (mcapi_port_t, mcapi_status_t *))
SIG(void, mcapi_endpoint_get_i, (mcapi_domain_t, mcapi_node_t, mcapi_port_t, mcapi_endpoint_t *, mcapi_request_t *, mcapi_status_t *))
SIG(mcapi_endpoint_t, mcapi_endpoint_get, (mcapi_domain_t, mcapi_node_t, mcapi_port_t, mcapi_timeout_t, mcapi_status_t *))
SIG(void, mcapi_endpoint_delete, (mcapi_endpoint_t, mcapi_status_t *))
SIG(void, mcapi_endpoint_get_attribute, (mcapi_endpoint_t, mcapi_uint_t, void *, size_t, mcapi_status_t *))
SIG(void, mcapi_endpoint_set_attribute, (mcapi_endpoint_t, mcapi_uint_t, const void *, size_t, mcapi_status_t *))
/* Messages */
SIG(void, mcapi_msg_send_i, (mcapi_endpoint_t, mcapi_endpoint_t, const void *, size_t, mcapi_priority_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_msg_send, (mcapi_endpoint_t, mcapi_endpoint_t, const void *, size_t, mcapi_priority_t, mcapi_status_t *))
SIG(void, mcapi_msg_recv_i, (mcapi_endpoint_t, void *, size_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_msg_recv, (mcapi_endpoint_t, void *, size_t, size_t *, mcapi_status_t *))
SIG(mcapi_uint_t, mcapi_msg_available, (mcapi_endpoint_t, mcapi_status_t *))
/* Packet channels */
SIG(void, mcapi_pktchan_connect_i, (mcapi_endpoint_t, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_recv_open_i, (mcapi_pktchan_recv_hndl_t *, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_send_open_i, (mcapi_pktchan_send_hndl_t *, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_send_i, (mcapi_pktchan_send_hndl_t, const void *, size_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_send, (mcapi_pktchan_send_hndl_t, const void *, size_t, mcapi_status_t *))
SIG(void, mcapi_pktchan_recv_i, (mcapi_pktchan_recv_hndl_t, void **, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_recv, (mcapi_pktchan_recv_hndl_t, void **, size_t *, mcapi_status_t *))
SIG(mcapi_uint_t, mcapi_pktchan_available, (mcapi_pktchan_recv_hndl_t, mcapi_status_t *))
SIG(void, mcapi_pktchan_release, (const void *, mcapi_status_t *))
SIG(mcapi_boolean_t, mcapi_pktchan_release_test, (const void *, mcapi_status_t *))
SIG(void, mcapi_pktchan_recv_close_i, (mcapi_pktchan_recv_hndl_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_pktchan_send_close_i, (mcapi_pktchan_send_hndl_t, mcapi_request_t *, mcapi_status_t *))
/* Scalar channels */
SIG(void, mcapi_sclchan_connect_i, (mcapi_endpoint_t, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_sclchan_recv_open_i, (mcapi_sclchan_recv_hndl_t *, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_open_i, (mcapi_sclchan_send_hndl_t *, mcapi_endpoint_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_uint64, (mcapi_sclchan_send_hndl_t, mcapi_uint64_t, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_uint32, (mcapi_sclchan_send_hndl_t, mcapi_uint32_t, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_uint16, (mcapi_sclchan_send_hndl_t, mcapi_uint16_t, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_uint8, (mcapi_sclchan_send_hndl_t, mcapi_uint8_t, mcapi_status_t *))
SIG(mcapi_uint64_t, mcapi_sclchan_recv_uint64, (mcapi_sclchan_recv_hndl_t, mcapi_status_t *))
SIG(mcapi_uint32_t, mcapi_sclchan_recv_uint32, (mcapi_sclchan_recv_hndl_t, mcapi_status_t *))
SIG(mcapi_uint16_t, mcapi_sclchan_recv_uint16, (mcapi_sclchan_recv_hndl_t, mcapi_status_t *))
SIG(mcapi_uint8_t, mcapi_sclchan_recv_uint8, (mcapi_sclchan_recv_hndl_t, mcapi_status_t *))
SIG(mcapi_uint_t, mcapi_sclchan_available, (mcapi_sclchan_recv_hndl_t, mcapi_status_t *))
SIG(void, mcapi_sclchan_recv_close_i, (mcapi_sclchan_recv_hndl_t, mcapi_request_t *, mcapi_status_t *))
SIG(void, mcapi_sclchan_send_close_i, (mcapi_sclchan_send_hndl_t, mcapi_request_t *, mcapi_status_t *))
/* Non-blocking operations */
SIG(mcapi_boolean_t, mcapi_test, (const mcapi_request_t *, size_t *, mcapi_status_t *))
SIG(mcapi_boolean_t, mcapi_wait, (const mcapi_request_t *, size_t *, mcapi_timeout_t, mcapi_status_t *))
SIG(mcapi_uint_t, mcapi_wait_any, (size_t, mcapi_request_t **, size_t *, mcapi_timeout_t, mcapi_status_t *))
SIG(void, mcapi_cancel, (const mcapi_request_t *, mcapi_status_t *))
/* Support */
SIG(char *, mcapi_display_status, (mcapi_status_t, char *, size_t))
