/* nodes: 1 2 4 */
/* launch: job hand */
/*
 * Initialisation, finalisation, node attributes, mcapi_info_t and mcapi_display_status.
 * Before mcapi_initialize every call that needs a node fails with MCAPI_ERR_NODE_NOTINIT;
 * mcapi_initialize rejects a NULL info, a domain above MCAPI_MAX_DOMAIN and node ids outside
 * the job, and leaves the node uninitialised when it fails; a second mcapi_initialize fails
 * with MCAPI_ERR_NODE_INITIALIZED. The info describes the job. Node attributes are built with
 * init/set and read back from every node. mcapi_display_status names every status code. After
 * mcapi_finalize the node is uninitialised again, a second finalize fails, and a new
 * mcapi_initialize works: the re-initialised nodes exchange messages.
 */
#define TEST_NAME "init"
#include "mcapi_testutil.h"

static void before_init(void)
{
    mcapi_status_t st;
    mcapi_request_t req = 0;
    mcapi_request_t *reqs[1];
    size_t size;
    mcapi_node_attr_type_t type = 0;
    char buf[8];

    mcapi_finalize(&st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    CHECK(mcapi_domain_id_get(&st) == MCAPI_DOMAIN_INVALID, "domain id before initialize");
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    CHECK(mcapi_node_id_get(&st) == MCAPI_NODE_INVALID, "node id before initialize");
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_endpoint_create(1, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_endpoint_get(DOMAIN, 0, 1, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    mcapi_node_get_attribute(DOMAIN, 0, MCAPI_NODE_ATTR_TYPE, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_msg_available(0, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_test(&req, &size, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    reqs[0] = &req;
    CHECK(mcapi_wait_any(1, reqs, &size, MCAPI_TIMEOUT_IMMEDIATE, &st)
          == MCAPI_RETURN_VALUE_INVALID, "wait_any before initialize returned an index");
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    mcapi_cancel(&req, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    mcapi_pktchan_release(buf, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_sclchan_recv_uint8(0, &st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    /* A support function needs no node. */
    CHECK(mcapi_display_status(MCAPI_SUCCESS, buf, sizeof buf) != NULL,
          "display_status before initialize");
}

static void node_attributes(mcapi_node_attributes_t *attrs)
{
    mcapi_status_t st;
    mcapi_node_attr_type_t type;
    unsigned char small = 0;

    mcapi_node_init_attributes(NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    memset(attrs, 0xA5, sizeof *attrs);
    mcapi_node_init_attributes(attrs, &st);
    OK(st);

    type = MCAPI_NODE_ATTR_TYPE_REGULAR;
    mcapi_node_set_attribute(attrs, MCAPI_NODE_ATTR_END, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);
    mcapi_node_set_attribute(attrs, 1000, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);
    mcapi_node_set_attribute(attrs, MCAPI_NODE_ATTR_TYPE, &small, sizeof small, &st);
    EXPECT(st, MCAPI_ERR_ATTR_SIZE);
    type = MCAPI_NODE_ATTR_TYPE_END;
    mcapi_node_set_attribute(attrs, MCAPI_NODE_ATTR_TYPE, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_VALUE);
    type = MCAPI_NODE_ATTR_TYPE_REGULAR;
    mcapi_node_set_attribute(NULL, MCAPI_NODE_ATTR_TYPE, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_node_set_attribute(attrs, MCAPI_NODE_ATTR_TYPE, NULL, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_node_set_attribute(attrs, MCAPI_NODE_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);
}

static void initialize_errors(const mcapi_node_attributes_t *attrs)
{
    mcapi_status_t st;
    mcapi_param_t param;
    mcapi_info_t info;
    memset(&param, 0, sizeof param);

    mcapi_initialize(DOMAIN, (mcapi_node_t)me, attrs, &param, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_initialize(MCAPI_MAX_DOMAIN + 1, (mcapi_node_t)me, attrs, &param, &info, &st);
    EXPECT(st, MCAPI_ERR_DOMAIN_INVALID);
    mcapi_initialize(DOMAIN, MCAPI_NODE_INVALID, attrs, &param, &info, &st);
    EXPECT(st, MCAPI_ERR_NODE_INVALID);
    mcapi_initialize(DOMAIN, (mcapi_node_t)MCAPI_MAX_NODE + 1, attrs, &param, &info, &st);
    EXPECT(st, MCAPI_ERR_NODE_INVALID);
    /* None of these initialised the node. */
    (void)mcapi_node_id_get(&st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
}

static void check_info(const mcapi_info_t *info)
{
    CHECK(info->mcapi_version == MCAPI_VERSION, "mcapi_version %u", info->mcapi_version);
    CHECK(info->organization_id == MCA_ORG_ID_TBA, "organization_id %u", info->organization_id);
    CHECK(info->number_of_domains == 1, "number_of_domains %u", info->number_of_domains);
    CHECK(info->number_of_nodes == (mcapi_uint_t)np, "number_of_nodes %u, job has %d",
          info->number_of_nodes, np);
    CHECK(info->number_of_ports == MCAPI_MAX_ENDPOINTS, "number_of_ports %u",
          info->number_of_ports);
    CHECK(info->impl_info != NULL, "impl_info is NULL");
    CHECK(info->impl_info->library != NULL
              && strncmp(info->impl_info->library, "Ferry", 5) == 0,
          "impl_info->library is not Ferry's");
    CHECK(info->impl_info->launch == expected_launch(), "impl_info->launch %u, expected %u",
          info->impl_info->launch, expected_launch());
}

static void node_queries(void)
{
    mcapi_status_t st;
    mcapi_node_attr_type_t type;
    unsigned char small;
    int i;

    CHECK(mcapi_domain_id_get(&st) == DOMAIN, "domain id");
    OK(st);
    CHECK(mcapi_node_id_get(&st) == (mcapi_node_t)me, "node id");
    OK(st);
    for (i = 0; i < np; i++) {
        type = 12345;
        mcapi_node_get_attribute(DOMAIN, (mcapi_node_t)i, MCAPI_NODE_ATTR_TYPE, &type,
                                 sizeof type, &st);
        OK(st);
        CHECK(type == MCAPI_NODE_ATTR_TYPE_REGULAR, "node %d has type %u", i, type);
    }
    i = (me + 1) % np;
    type = 12345;
    mcapi_node_get_attribute(DOMAIN + 1, (mcapi_node_t)i, MCAPI_NODE_ATTR_TYPE, &type,
                             sizeof type, &st);
    EXPECT(st, MCAPI_ERR_DOMAIN_INVALID);
    mcapi_node_get_attribute(DOMAIN, (mcapi_node_t)np, MCAPI_NODE_ATTR_TYPE, &type,
                             sizeof type, &st);
    EXPECT(st, MCAPI_ERR_NODE_INVALID);
    mcapi_node_get_attribute(DOMAIN, (mcapi_node_t)i, MCAPI_NODE_ATTR_END, &type,
                             sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);
    mcapi_node_get_attribute(DOMAIN, (mcapi_node_t)i, MCAPI_NODE_ATTR_TYPE, &small,
                             sizeof small, &st);
    EXPECT(st, MCAPI_ERR_ATTR_SIZE);
    mcapi_node_get_attribute(DOMAIN, (mcapi_node_t)i, MCAPI_NODE_ATTR_TYPE, NULL,
                             sizeof type, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    CHECK(type == 12345, "a failed get_attribute wrote the attribute");
}

/* The name each status code must display as: the specification's spelling. */
static const char *const status_names[] = {
    NULL, "MCAPI_SUCCESS", "MCAPI_PENDING", "MCAPI_TIMEOUT", "MCAPI_ERR_PARAMETER",
    "MCAPI_ERR_DOMAIN_INVALID", "MCAPI_ERR_NODE_INVALID", "MCAPI_ERR_NODE_INITFAILED",
    "MCAPI_ERR_NODE_INITIALIZED", "MCAPI_ERR_NODE_NOTINIT", "MCAPI_ERR_NODE_FINALFAILED",
    "MCAPI_ERR_PORT_INVALID", "MCAPI_ERR_ENDP_INVALID", "MCAPI_ERR_ENDP_EXISTS",
    "MCAPI_ERR_ENDP_GET_LIMIT", "MCAPI_ERR_ENDP_DELETED", "MCAPI_ERR_ENDP_NOTOWNER",
    "MCAPI_ERR_ENDP_REMOTE", "MCAPI_ERR_ENDP_NOPORTS", "MCAPI_ERR_ENDP_LIMIT",
    "MCAPI_ERR_ATTR_INCOMPATIBLE", "MCAPI_ERR_ATTR_SIZE", "MCAPI_ERR_ATTR_NUM",
    "MCAPI_ERR_ATTR_VALUE", "MCAPI_ERR_ATTR_NOTSUPPORTED", "MCAPI_ERR_ATTR_READONLY",
    "MCAPI_ERR_MSG_SIZE", "MCAPI_ERR_MSG_TRUNCATED", "MCAPI_ERR_CHAN_OPEN",
    "MCAPI_ERR_CHAN_TYPE", "MCAPI_ERR_CHAN_DIRECTION", "MCAPI_ERR_CHAN_CONNECTED",
    "MCAPI_ERR_CHAN_OPENPENDING", "MCAPI_ERR_CHAN_NOTOPEN", "MCAPI_ERR_CHAN_INVALID",
    "MCAPI_ERR_PKT_SIZE", "MCAPI_ERR_SCL_SIZE", "MCAPI_ERR_TRANSMISSION",
    "MCAPI_ERR_PRIORITY", "MCAPI_ERR_BUF_INVALID", "MCAPI_ERR_MEM_LIMIT",
    "MCAPI_ERR_REQUEST_INVALID", "MCAPI_ERR_REQUEST_LIMIT", "MCAPI_ERR_REQUEST_CANCELLED",
    "MCAPI_ERR_WAIT_PENDING", "MCAPI_ERR_GENERAL", "MCAPI_ERR_CHAN_CLOSEPENDING",
};

static void display_status(void)
{
    char buf[MCAPI_MAX_STATUS_SIZE], small[6];
    mcapi_status_t s;
    char *r;

    CHECK(sizeof status_names / sizeof status_names[0] == MCAPI_STATUSCODE_END,
          "the table of names is out of date");
    for (s = MCAPI_SUCCESS; s < MCAPI_STATUSCODE_END; s++) {
        memset(buf, 'x', sizeof buf);
        r = mcapi_display_status(s, buf, sizeof buf);
        CHECK(r == buf, "display_status(%u) returned %p, not the buffer", s, (void *)r);
        CHECK(strcmp(buf, status_names[s]) == 0, "display_status(%u) is \"%.*s\", expected %s",
              s, (int)sizeof buf, buf, status_names[s]);
    }
    r = mcapi_display_status(MCAPI_ERR_PORT_INVALID, small, sizeof small);
    CHECK(r == small && strcmp(small, "MCAPI") == 0, "a short buffer is not cut to size - 1");
    CHECK(mcapi_display_status(0, buf, sizeof buf) == NULL, "status 0 has a name");
    CHECK(mcapi_display_status(MCAPI_STATUSCODE_END, buf, sizeof buf) == NULL,
          "MCAPI_STATUSCODE_END has a name");
    CHECK(mcapi_display_status(1000, buf, sizeof buf) == NULL, "status 1000 has a name");
    CHECK(mcapi_display_status(MCAPI_SUCCESS, NULL, 32) == NULL, "a NULL buffer was written");
    CHECK(mcapi_display_status(MCAPI_SUCCESS, buf, 0) == NULL, "a 0-byte buffer was written");
}

/* After a re-initialisation: each node sends its id to the next and checks what it gets. */
static void second_life(void)
{
    mcapi_status_t st;
    mcapi_endpoint_t e, next;
    uint32_t word, got = 0;
    size_t size;

    node_init();
    ctl_setup(CTL_PORT + 1);
    e = create_ep(10);
    next = get_ep((me + 1) % np, 10);
    barrier();
    word = 0x1000u + (uint32_t)me;
    mcapi_msg_send(e, next, &word, sizeof word, 1, &st);
    OK(st);
    mcapi_msg_recv(e, &got, sizeof got, &size, &st);
    OK(st);
    CHECK(size == sizeof got && got == 0x1000u + (uint32_t)((me + np - 1) % np),
          "after re-initialisation got %#x", (unsigned)got);
}

int main(void)
{
    mcapi_status_t st;
    mcapi_node_attributes_t attrs;
    mcapi_param_t param;
    mcapi_info_t info;

    test_env(1);
    before_init();
    node_attributes(&attrs);
    initialize_errors(&attrs);
    display_status();

    memset(&param, 0, sizeof param);
    memset(&info, 0, sizeof info);
    mcapi_initialize(DOMAIN, (mcapi_node_t)me, &attrs, &param, &info, &st);
    OK(st);
    check_info(&info);
    mcapi_initialize(DOMAIN, (mcapi_node_t)me, &attrs, &param, &info, &st);
    EXPECT(st, MCAPI_ERR_NODE_INITIALIZED);
    ctl_setup(CTL_PORT);
    node_queries();
    barrier();

    mcapi_finalize(&st);
    OK(st);
    mcapi_finalize(&st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);
    (void)mcapi_node_id_get(&st);
    EXPECT(st, MCAPI_ERR_NODE_NOTINIT);

    /* A NULL attributes pointer means the defaults; so does a NULL parameters pointer. */
    mcapi_initialize(DOMAIN, (mcapi_node_t)me, NULL, NULL, &info, &st);
    OK(st);
    mcapi_finalize(&st);
    OK(st);

    second_life();
    return node_done();
}
