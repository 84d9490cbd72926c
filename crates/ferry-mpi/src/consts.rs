//! The constants, handle types and `MPI_Status` of `include/mpi.h`, for the Rust side of the C
//! ABI. Values are MPICH's (see DESIGN.md, "MPI C ABI"); names are the C names.
//!
//! Each constant also appears in a table ([`HEADER_CONSTANTS`], [`HEADER_POINTERS`],
//! [`MPICH_ONLY_CONSTANTS`]) so tests can check them against the header and the header against
//! MPICH's: `crates/ferry-mpi/tests/abi_consts.rs` and `tests/abi/check.sh`.

#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case)]

use std::ffi::{c_int, c_long, c_void};

/// Communicator handle.
pub type MPI_Comm = c_int;
/// Datatype handle.
pub type MPI_Datatype = c_int;
/// Request handle.
pub type MPI_Request = c_int;
/// Reduction operation handle.
pub type MPI_Op = c_int;
/// Error handler handle.
pub type MPI_Errhandler = c_int;
/// Group handle.
pub type MPI_Group = c_int;
/// Info object handle.
pub type MPI_Info = c_int;
/// Matched-message handle (`MPI_Mprobe`).
pub type MPI_Message = c_int;
/// Window handle (one-sided communication).
pub type MPI_Win = c_int;
/// MPI-4 session handle.
pub type MPI_Session = c_int;
/// A user-defined reduction: `inoutvec[i] = invec[i] op inoutvec[i]` for `*len` elements of
/// `*datatype` (`MPI_Op_create`).
pub type MPI_User_function = unsafe extern "C" fn(invec: *mut c_void, inoutvec: *mut c_void, len: *mut c_int, datatype: *mut MPI_Datatype);
/// MPI-4's large-count reduction function (`MPI_Op_create_c`): `len` is an `MPI_Count`.
pub type MPI_User_function_c = unsafe extern "C" fn(invec: *mut c_void, inoutvec: *mut c_void, len: *mut MPI_Count, datatype: *mut MPI_Datatype);
/// An address or address difference (`long` in C).
pub type MPI_Aint = isize;
/// A file offset (`long` in C, as MPICH declares it).
pub type MPI_Offset = c_long;
/// A large count (`long` in C, as MPICH declares it).
pub type MPI_Count = c_long;
/// A Fortran `INTEGER`.
pub type MPI_Fint = c_int;

/// The status of a completed receive, with MPICH's layout. The first two fields are private to
/// the library: they hold the received byte count and the cancelled flag, encoded as MPICH
/// encodes them (count bits 0..32 in `count_lo`, bits 32.. in `count_hi_and_cancelled` above
/// the cancelled flag in bit 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}

/// The `mpi_f08` module's status as C sees it (MPICH's `MPI_F08_status`): the fields of
/// [`MPI_Status`] as Fortran INTEGERs (`status_convert.rs` converts).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_F08_status {
    pub count_lo: MPI_Fint,
    pub count_hi_and_cancelled: MPI_Fint,
    pub MPI_SOURCE: MPI_Fint,
    pub MPI_TAG: MPI_Fint,
    pub MPI_ERROR: MPI_Fint,
}

impl MPI_Status {
    /// Bytes the operation received.
    pub fn byte_count(&self) -> MPI_Count {
        let hi = (self.count_hi_and_cancelled as u32 >> 1) as u64;
        ((hi << 32) | self.count_lo as u32 as u64) as MPI_Count
    }

    /// Records the bytes received, keeping the cancelled flag.
    pub fn set_byte_count(&mut self, bytes: MPI_Count) {
        let bytes = bytes as u64;
        self.count_lo = bytes as u32 as c_int;
        let hi = ((bytes >> 32) as u32) << 1;
        self.count_hi_and_cancelled = (hi | (self.count_hi_and_cancelled as u32 & 1)) as c_int;
    }

    /// Whether the operation was cancelled.
    pub fn cancelled(&self) -> bool {
        self.count_hi_and_cancelled & 1 != 0
    }

    /// Records whether the operation was cancelled, keeping the byte count.
    pub fn set_cancelled(&mut self, cancelled: bool) {
        self.count_hi_and_cancelled = (self.count_hi_and_cancelled & !1) | cancelled as c_int;
    }
}

/// Defines the constants and a table of `(name, value)` listing them.
macro_rules! constants {
    (
        $(#[$table_doc:meta])*
        $table:ident {
            $( $(#[$doc:meta])* $name:ident : $ty:ty = $value:expr; )*
        }
    ) => {
        $( $(#[$doc])* pub const $name: $ty = $value; )*
        $(#[$table_doc])*
        pub const $table: &[(&str, i64)] = &[ $( (stringify!($name), $name as i64), )* ];
    };
}

constants! {
    /// Every integer constant `include/mpi.h` defines, by name.
    HEADER_CONSTANTS {
        /// Version of the standard whose interface the header declares (a subset of it).
        MPI_VERSION: c_int = 4;
        MPI_SUBVERSION: c_int = 0;

        // Null handles.
        MPI_COMM_NULL: MPI_Comm = 0x04000000;
        MPI_GROUP_NULL: MPI_Group = 0x08000000;
        MPI_DATATYPE_NULL: MPI_Datatype = 0x0c000000;
        MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x14000000;
        MPI_OP_NULL: MPI_Op = 0x18000000;
        // Predefined reduction operations.
        MPI_MAX: MPI_Op = 0x58000001;
        MPI_MIN: MPI_Op = 0x58000002;
        MPI_SUM: MPI_Op = 0x58000003;
        MPI_PROD: MPI_Op = 0x58000004;
        MPI_LAND: MPI_Op = 0x58000005;
        MPI_BAND: MPI_Op = 0x58000006;
        MPI_LOR: MPI_Op = 0x58000007;
        MPI_BOR: MPI_Op = 0x58000008;
        MPI_LXOR: MPI_Op = 0x58000009;
        MPI_BXOR: MPI_Op = 0x5800000a;
        MPI_MINLOC: MPI_Op = 0x5800000b;
        MPI_MAXLOC: MPI_Op = 0x5800000c;
        MPI_REPLACE: MPI_Op = 0x5800000d;
        MPI_NO_OP: MPI_Op = 0x5800000e;
        MPI_INFO_NULL: MPI_Info = 0x1c000000;
        /// The predefined info object that says how the process was started.
        MPI_INFO_ENV: MPI_Info = 0x5c000001;
        MPI_REQUEST_NULL: MPI_Request = 0x2c000000;
        MPI_MESSAGE_NULL: MPI_Message = 0x2c000000;
        /// The message `MPI_Mprobe` returns for a probe of `MPI_PROC_NULL`.
        MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c000000;

        // Predefined communicators and error handlers.
        MPI_COMM_WORLD: MPI_Comm = 0x44000000;
        MPI_COMM_SELF: MPI_Comm = 0x44000001;
        MPI_GROUP_EMPTY: MPI_Group = 0x48000000;
        MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x54000000;
        MPI_ERRORS_RETURN: MPI_Errhandler = 0x54000001;
        MPI_ERRORS_ABORT: MPI_Errhandler = 0x54000003;

        // Predefined datatypes; builtin handles carry the element size in bits 8..15.
        MPI_CHAR: MPI_Datatype = 0x4c000101;
        MPI_SIGNED_CHAR: MPI_Datatype = 0x4c000118;
        MPI_UNSIGNED_CHAR: MPI_Datatype = 0x4c000102;
        MPI_BYTE: MPI_Datatype = 0x4c00010d;
        MPI_WCHAR: MPI_Datatype = 0x4c00040e;
        MPI_SHORT: MPI_Datatype = 0x4c000203;
        MPI_UNSIGNED_SHORT: MPI_Datatype = 0x4c000204;
        MPI_INT: MPI_Datatype = 0x4c000405;
        MPI_UNSIGNED: MPI_Datatype = 0x4c000406;
        MPI_LONG: MPI_Datatype = 0x4c000807;
        MPI_UNSIGNED_LONG: MPI_Datatype = 0x4c000808;
        MPI_LONG_LONG_INT: MPI_Datatype = 0x4c000809;
        MPI_LONG_LONG: MPI_Datatype = MPI_LONG_LONG_INT;
        MPI_UNSIGNED_LONG_LONG: MPI_Datatype = 0x4c000819;
        MPI_FLOAT: MPI_Datatype = 0x4c00040a;
        MPI_DOUBLE: MPI_Datatype = 0x4c00080b;
        MPI_LONG_DOUBLE: MPI_Datatype = 0x4c00100c;
        MPI_PACKED: MPI_Datatype = 0x4c00010f;
        // MPI-1's bound markers, removed in MPI-3; MPICH's header still has them.
        MPI_LB: MPI_Datatype = 0x4c000010;
        MPI_UB: MPI_Datatype = 0x4c000011;
        MPI_INT8_T: MPI_Datatype = 0x4c000137;
        MPI_INT16_T: MPI_Datatype = 0x4c000238;
        MPI_INT32_T: MPI_Datatype = 0x4c000439;
        MPI_INT64_T: MPI_Datatype = 0x4c00083a;
        MPI_UINT8_T: MPI_Datatype = 0x4c00013b;
        MPI_UINT16_T: MPI_Datatype = 0x4c00023c;
        MPI_UINT32_T: MPI_Datatype = 0x4c00043d;
        MPI_UINT64_T: MPI_Datatype = 0x4c00083e;
        MPI_C_BOOL: MPI_Datatype = 0x4c00013f;
        MPI_LOGICAL: MPI_Datatype = 0x4c00041d;
        MPI_C_FLOAT_COMPLEX: MPI_Datatype = 0x4c000840;
        MPI_C_COMPLEX: MPI_Datatype = MPI_C_FLOAT_COMPLEX;
        MPI_C_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001041;
        MPI_C_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002042;
        MPI_AINT: MPI_Datatype = 0x4c000843;
        MPI_OFFSET: MPI_Datatype = 0x4c000844;
        MPI_COUNT: MPI_Datatype = 0x4c000845;
        /// MPICH's extension: C's `_Float16` (IEEE binary16).
        MPIX_C_FLOAT16: MPI_Datatype = 0x4c000246;
        // Value-and-index pairs for MINLOC/MAXLOC.
        MPI_FLOAT_INT: MPI_Datatype = 0x8c000000u32 as i32;
        MPI_DOUBLE_INT: MPI_Datatype = 0x8c000001u32 as i32;
        MPI_LONG_INT: MPI_Datatype = 0x8c000002u32 as i32;
        MPI_SHORT_INT: MPI_Datatype = 0x8c000003u32 as i32;
        MPI_LONG_DOUBLE_INT: MPI_Datatype = 0x8c000004u32 as i32;
        MPI_2INT: MPI_Datatype = 0x4c000816;

        // Special ranks, tags and counts.
        MPI_PROC_NULL: c_int = -1;
        MPI_ANY_SOURCE: c_int = -2;
        MPI_ROOT: c_int = -3;
        MPI_ANY_TAG: c_int = -1;
        MPI_UNDEFINED: c_int = -32766;
        MPI_KEYVAL_INVALID: c_int = 0x24000000;
        // A Fortran INTEGER status seen from C: its length and where its public fields are.
        MPI_F_STATUS_SIZE: c_int = 5;
        MPI_F_SOURCE: c_int = 2;
        MPI_F_TAG: c_int = 3;
        MPI_F_ERROR: c_int = 4;
        // Topology kinds (MPI_Topo_test).
        MPI_GRAPH: c_int = 1;
        MPI_CART: c_int = 2;
        MPI_DIST_GRAPH: c_int = 3;
        // Predefined attribute keys.
        MPI_TAG_UB: c_int = 0x64400001;
        MPI_HOST: c_int = 0x64400003;
        MPI_IO: c_int = 0x64400005;
        MPI_WTIME_IS_GLOBAL: c_int = 0x64400007;
        MPI_UNIVERSE_SIZE: c_int = 0x64400009;
        MPI_LASTUSEDCODE: c_int = 0x6440000b;
        MPI_APPNUM: c_int = 0x6440000d;
        /// Upper bound on the bookkeeping `MPI_Bsend` adds to each message in the buffer.
        MPI_BSEND_OVERHEAD: c_int = 96;
        MPI_MAX_PROCESSOR_NAME: c_int = 128;
        MPI_MAX_ERROR_STRING: c_int = 512;
        MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
        MPI_MAX_INFO_KEY: c_int = 255;
        MPI_MAX_INFO_VAL: c_int = 1024;

        // Thread levels.
        MPI_THREAD_SINGLE: c_int = 0;
        MPI_THREAD_FUNNELED: c_int = 1;
        MPI_THREAD_SERIALIZED: c_int = 2;
        MPI_THREAD_MULTIPLE: c_int = 3;

        // Results of MPI_Comm_compare.
        MPI_IDENT: c_int = 0;
        MPI_CONGRUENT: c_int = 1;
        MPI_SIMILAR: c_int = 2;
        MPI_UNEQUAL: c_int = 3;

        /// Split type of `MPI_Comm_split_type`: the ranks of one host.
        MPI_COMM_TYPE_SHARED: c_int = 1;
        MPI_COMM_TYPE_HW_GUIDED: c_int = 2;
        MPI_COMM_TYPE_HW_UNGUIDED: c_int = 3;
        /// MPICH's split by a neighbourhood that info hints name (a file system path,
        /// a network level): Ferry knows none, so it gives `MPI_COMM_NULL`.
        MPIX_COMM_TYPE_NEIGHBORHOOD: c_int = 4;

        // Error classes.
        MPI_SUCCESS: c_int = 0;
        MPI_ERR_BUFFER: c_int = 1;
        MPI_ERR_COUNT: c_int = 2;
        MPI_ERR_TYPE: c_int = 3;
        MPI_ERR_TAG: c_int = 4;
        MPI_ERR_COMM: c_int = 5;
        MPI_ERR_RANK: c_int = 6;
        MPI_ERR_ROOT: c_int = 7;
        MPI_ERR_GROUP: c_int = 8;
        MPI_ERR_OP: c_int = 9;
        MPI_ERR_TOPOLOGY: c_int = 10;
        MPI_ERR_DIMS: c_int = 11;
        MPI_ERR_ARG: c_int = 12;
        MPI_ERR_UNKNOWN: c_int = 13;
        MPI_ERR_TRUNCATE: c_int = 14;
        MPI_ERR_OTHER: c_int = 15;
        MPI_ERR_INTERN: c_int = 16;
        MPI_ERR_IN_STATUS: c_int = 17;
        MPI_ERR_PENDING: c_int = 18;
        MPI_ERR_REQUEST: c_int = 19;
        MPI_ERR_ACCESS: c_int = 20;
        MPI_ERR_AMODE: c_int = 21;
        MPI_ERR_BAD_FILE: c_int = 22;
        MPI_ERR_CONVERSION: c_int = 23;
        MPI_ERR_DUP_DATAREP: c_int = 24;
        MPI_ERR_FILE_EXISTS: c_int = 25;
        MPI_ERR_FILE_IN_USE: c_int = 26;
        MPI_ERR_FILE: c_int = 27;
        MPI_ERR_INFO: c_int = 28;
        MPI_ERR_INFO_KEY: c_int = 29;
        MPI_ERR_INFO_VALUE: c_int = 30;
        MPI_ERR_INFO_NOKEY: c_int = 31;
        MPI_ERR_IO: c_int = 32;
        MPI_ERR_NAME: c_int = 33;
        MPI_ERR_NO_MEM: c_int = 34;
        MPI_ERR_NOT_SAME: c_int = 35;
        MPI_ERR_NO_SPACE: c_int = 36;
        MPI_ERR_NO_SUCH_FILE: c_int = 37;
        MPI_ERR_PORT: c_int = 38;
        MPI_ERR_QUOTA: c_int = 39;
        MPI_ERR_READ_ONLY: c_int = 40;
        MPI_ERR_SERVICE: c_int = 41;
        MPI_ERR_SPAWN: c_int = 42;
        MPI_ERR_UNSUPPORTED_DATAREP: c_int = 43;
        MPI_ERR_UNSUPPORTED_OPERATION: c_int = 44;
        MPI_ERR_WIN: c_int = 45;
        MPI_ERR_BASE: c_int = 46;
        MPI_ERR_LOCKTYPE: c_int = 47;
        MPI_ERR_KEYVAL: c_int = 48;
        MPI_ERR_RMA_CONFLICT: c_int = 49;
        MPI_ERR_RMA_SYNC: c_int = 50;
        MPI_ERR_SIZE: c_int = 51;
        MPI_ERR_DISP: c_int = 52;
        MPI_ERR_ASSERT: c_int = 53;
        MPI_ERR_RMA_RANGE: c_int = 55;
        MPI_ERR_RMA_ATTACH: c_int = 56;
        MPI_ERR_RMA_SHARED: c_int = 57;
        MPI_ERR_RMA_FLAVOR: c_int = 58;
        MPI_T_ERR_MEMORY: c_int = 59;
        MPI_T_ERR_NOT_INITIALIZED: c_int = 60;
        MPI_T_ERR_CANNOT_INIT: c_int = 61;
        MPI_T_ERR_INVALID_INDEX: c_int = 62;
        MPI_T_ERR_INVALID_ITEM: c_int = 63;
        MPI_T_ERR_INVALID_HANDLE: c_int = 64;
        MPI_T_ERR_OUT_OF_HANDLES: c_int = 65;
        MPI_T_ERR_OUT_OF_SESSIONS: c_int = 66;
        MPI_T_ERR_INVALID_SESSION: c_int = 67;
        MPI_T_ERR_CVAR_SET_NOT_NOW: c_int = 68;
        MPI_T_ERR_CVAR_SET_NEVER: c_int = 69;
        MPI_T_ERR_PVAR_NO_STARTSTOP: c_int = 70;
        MPI_T_ERR_PVAR_NO_WRITE: c_int = 71;
        MPI_T_ERR_PVAR_NO_ATOMIC: c_int = 72;
        MPI_T_ERR_INVALID_NAME: c_int = 73;
        MPI_T_ERR_INVALID: c_int = 74;
        MPI_ERR_SESSION: c_int = 75;
        MPI_ERR_PROC_ABORTED: c_int = 76;
        MPI_ERR_VALUE_TOO_LARGE: c_int = 77;
        MPI_T_ERR_NOT_SUPPORTED: c_int = 78;
        // Process failure (fault-tolerant MPI, mpi-ext.h), at MPICH's values, in mpi.h as in
        // MPICH's.
        MPIX_ERR_PROC_FAILED: c_int = 101;
        MPIX_ERR_PROC_FAILED_PENDING: c_int = 102;
        MPIX_ERR_REVOKED: c_int = 103;
        /// Largest error code of a predefined class; codes above it are ours to define.
        MPI_ERR_LASTCODE: c_int = 0x3fffffff;

        // Datatype introspection: combiners, array orders and distributions, type classes.
        MPI_COMBINER_NAMED: c_int = 1;
        MPI_COMBINER_DUP: c_int = 2;
        MPI_COMBINER_CONTIGUOUS: c_int = 3;
        MPI_COMBINER_VECTOR: c_int = 4;
        MPI_COMBINER_HVECTOR_INTEGER: c_int = 5;
        MPI_COMBINER_HVECTOR: c_int = 6;
        MPI_COMBINER_INDEXED: c_int = 7;
        MPI_COMBINER_HINDEXED_INTEGER: c_int = 8;
        MPI_COMBINER_HINDEXED: c_int = 9;
        MPI_COMBINER_INDEXED_BLOCK: c_int = 10;
        MPI_COMBINER_STRUCT_INTEGER: c_int = 11;
        MPI_COMBINER_STRUCT: c_int = 12;
        MPI_COMBINER_SUBARRAY: c_int = 13;
        MPI_COMBINER_DARRAY: c_int = 14;
        MPI_COMBINER_F90_REAL: c_int = 15;
        MPI_COMBINER_F90_COMPLEX: c_int = 16;
        MPI_COMBINER_F90_INTEGER: c_int = 17;
        MPI_COMBINER_RESIZED: c_int = 18;
        MPI_COMBINER_HINDEXED_BLOCK: c_int = 19;
        MPI_ORDER_C: c_int = 56;
        MPI_ORDER_FORTRAN: c_int = 57;
        MPI_DISTRIBUTE_BLOCK: c_int = 121;
        MPI_DISTRIBUTE_CYCLIC: c_int = 122;
        MPI_DISTRIBUTE_NONE: c_int = 123;
        MPI_DISTRIBUTE_DFLT_DARG: c_int = -49767;
        MPI_TYPECLASS_REAL: c_int = 1;
        MPI_TYPECLASS_INTEGER: c_int = 2;
        MPI_TYPECLASS_COMPLEX: c_int = 3;
        MPI_MAX_OBJECT_NAME: c_int = 128;
        MPI_MAX_PORT_NAME: c_int = 256;
        // The tools interface: verbosity, binding, scope and pvar class (MPICH's values).
        MPI_T_VERBOSITY_INVALID: c_int = 0;
        MPI_T_VERBOSITY_USER_BASIC: c_int = 221;
        MPI_T_VERBOSITY_USER_DETAIL: c_int = 222;
        MPI_T_VERBOSITY_USER_ALL: c_int = 223;
        MPI_T_VERBOSITY_TUNER_BASIC: c_int = 224;
        MPI_T_VERBOSITY_TUNER_DETAIL: c_int = 225;
        MPI_T_VERBOSITY_TUNER_ALL: c_int = 226;
        MPI_T_VERBOSITY_MPIDEV_BASIC: c_int = 227;
        MPI_T_VERBOSITY_MPIDEV_DETAIL: c_int = 228;
        MPI_T_VERBOSITY_MPIDEV_ALL: c_int = 229;
        MPI_T_BIND_INVALID: c_int = 0;
        MPI_T_BIND_NO_OBJECT: c_int = 9700;
        MPI_T_BIND_MPI_COMM: c_int = 9701;
        MPI_T_BIND_MPI_DATATYPE: c_int = 9702;
        MPI_T_BIND_MPI_ERRHANDLER: c_int = 9703;
        MPI_T_BIND_MPI_FILE: c_int = 9704;
        MPI_T_BIND_MPI_GROUP: c_int = 9705;
        MPI_T_BIND_MPI_OP: c_int = 9706;
        MPI_T_BIND_MPI_REQUEST: c_int = 9707;
        MPI_T_BIND_MPI_WIN: c_int = 9708;
        MPI_T_BIND_MPI_MESSAGE: c_int = 9709;
        MPI_T_BIND_MPI_INFO: c_int = 9710;
        MPI_T_SCOPE_INVALID: c_int = 0;
        MPI_T_SCOPE_CONSTANT: c_int = 60438;
        MPI_T_SCOPE_READONLY: c_int = 60439;
        MPI_T_SCOPE_LOCAL: c_int = 60440;
        MPI_T_SCOPE_GROUP: c_int = 60441;
        MPI_T_SCOPE_GROUP_EQ: c_int = 60442;
        MPI_T_SCOPE_ALL: c_int = 60443;
        MPI_T_SCOPE_ALL_EQ: c_int = 60444;
        MPI_T_PVAR_CLASS_INVALID: c_int = 0;
        MPI_T_PVAR_CLASS_STATE: c_int = 240;
        MPI_T_PVAR_CLASS_LEVEL: c_int = 241;
        MPI_T_PVAR_CLASS_SIZE: c_int = 242;
        MPI_T_PVAR_CLASS_PERCENTAGE: c_int = 243;
        MPI_T_PVAR_CLASS_HIGHWATERMARK: c_int = 244;
        MPI_T_PVAR_CLASS_LOWWATERMARK: c_int = 245;
        MPI_T_PVAR_CLASS_COUNTER: c_int = 246;
        MPI_T_PVAR_CLASS_AGGREGATE: c_int = 247;
        MPI_T_PVAR_CLASS_TIMER: c_int = 248;
        MPI_T_PVAR_CLASS_GENERIC: c_int = 249;
        // Event callbacks' safety requirements and event sources' ordering (MPICH's values).
        MPI_T_CB_REQUIRE_NONE: c_int = 0;
        MPI_T_CB_REQUIRE_MPI_RESTRICTED: c_int = 1;
        MPI_T_CB_REQUIRE_THREAD_SAFE: c_int = 2;
        MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE: c_int = 3;
        MPI_T_SOURCE_ORDERED: c_int = 0;
        MPI_T_SOURCE_UNORDERED: c_int = 1;

        // One-sided communication (windows).
        MPI_WIN_NULL: MPI_Win = 0x20000000;
        MPI_LOCK_EXCLUSIVE: c_int = 234;
        MPI_LOCK_SHARED: c_int = 235;
        MPI_MODE_NOCHECK: c_int = 1024;
        MPI_MODE_NOSTORE: c_int = 2048;
        MPI_MODE_NOPUT: c_int = 4096;
        MPI_MODE_NOPRECEDE: c_int = 8192;
        MPI_MODE_NOSUCCEED: c_int = 16384;
        MPI_WIN_BASE: c_int = 0x66000001;
        MPI_WIN_SIZE: c_int = 0x66000003;
        MPI_WIN_DISP_UNIT: c_int = 0x66000005;
        MPI_WIN_CREATE_FLAVOR: c_int = 0x66000007;
        MPI_WIN_MODEL: c_int = 0x66000009;
        MPI_WIN_FLAVOR_CREATE: c_int = 1;
        MPI_WIN_FLAVOR_ALLOCATE: c_int = 2;
        MPI_WIN_FLAVOR_DYNAMIC: c_int = 3;
        MPI_WIN_FLAVOR_SHARED: c_int = 4;
        MPI_WIN_SEPARATE: c_int = 1;
        MPI_WIN_UNIFIED: c_int = 2;
        MPI_SESSION_NULL: MPI_Session = 0x38000000;
        MPI_MAX_PSET_NAME_LEN: c_int = 256;
        MPI_MAX_STRINGTAG_LEN: c_int = 256;
        // Files (MPI-IO): access modes, seek origins, the view's current displacement.
        MPI_MODE_CREATE: c_int = 1;
        MPI_MODE_RDONLY: c_int = 2;
        MPI_MODE_WRONLY: c_int = 4;
        MPI_MODE_RDWR: c_int = 8;
        MPI_MODE_DELETE_ON_CLOSE: c_int = 16;
        MPI_MODE_UNIQUE_OPEN: c_int = 32;
        MPI_MODE_EXCL: c_int = 64;
        MPI_MODE_APPEND: c_int = 128;
        MPI_MODE_SEQUENTIAL: c_int = 256;
        MPI_SEEK_SET: c_int = 600;
        MPI_SEEK_CUR: c_int = 602;
        MPI_SEEK_END: c_int = 604;
        MPI_DISPLACEMENT_CURRENT: c_int = -54278278;
        MPI_MAX_DATAREP_STRING: c_int = 128;
    }
}

/// A file handle: pointer-sized, as in MPICH's ABI (`struct ADIOI_FileD *`); Ferry's values
/// are numbers, never addresses.
pub type MPI_File = usize;
/// `MPI_FILE_NULL`: `(MPI_File)0`.
pub const MPI_FILE_NULL: MPI_File = 0;

/// `MPI_BOTTOM`: address 0, for absolute displacements.
pub const MPI_BOTTOM: *mut c_void = std::ptr::null_mut();
/// `MPI_IN_PLACE`: `(void *)-1`.
pub const MPI_IN_PLACE: *mut c_void = std::ptr::without_provenance_mut(usize::MAX);
/// `MPI_STATUS_IGNORE`: `(MPI_Status *)1`.
pub const MPI_STATUS_IGNORE: *mut MPI_Status = std::ptr::without_provenance_mut(1);
/// `MPI_STATUSES_IGNORE`: `(MPI_Status *)1`.
pub const MPI_STATUSES_IGNORE: *mut MPI_Status = std::ptr::without_provenance_mut(1);

/// The pointer constants of `include/mpi.h`, by name, as the integer the pointer holds.
pub const HEADER_POINTERS: &[(&str, i64)] = &[
    ("MPI_FILE_NULL", 0),
    ("MPI_BOTTOM", 0),
    ("MPI_IN_PLACE", -1),
    ("MPI_STATUS_IGNORE", 1),
    ("MPI_STATUSES_IGNORE", 1),
    ("MPI_ARGV_NULL", 0),
    ("MPI_ARGVS_NULL", 0),
    ("MPI_ERRCODES_IGNORE", 0),
    ("MPI_COMM_NULL_COPY_FN", 0),
    ("MPI_COMM_NULL_DELETE_FN", 0),
    ("MPI_TYPE_NULL_COPY_FN", 0),
    ("MPI_TYPE_NULL_DELETE_FN", 0),
    ("MPI_NULL_COPY_FN", 0),
    ("MPI_NULL_DELETE_FN", 0),
    ("MPI_T_ENUM_NULL", 0),
    ("MPI_T_CVAR_HANDLE_NULL", 0),
    ("MPI_T_PVAR_HANDLE_NULL", 0),
    ("MPI_T_PVAR_SESSION_NULL", 0),
    // Functions of the library: 1 stands for "not null" (tests/abi/abi_print.c, FN).
    ("MPI_COMM_DUP_FN", 1),
    ("MPI_TYPE_DUP_FN", 1),
    ("MPI_WIN_NULL_COPY_FN", 0),
    ("MPI_WIN_NULL_DELETE_FN", 0),
    ("MPI_WIN_DUP_FN", 1),
];

constants! {
    /// Handles and constants of MPICH's header that `include/mpi.h` does not declare (yet): a
    /// program built against MPICH's header may still pass them to the library.
    MPICH_ONLY_CONSTANTS {
        // Fortran datatypes.
        MPI_CHARACTER: MPI_Datatype = 0x4c00011a;
        MPI_INTEGER: MPI_Datatype = 0x4c00041b;
        MPI_REAL: MPI_Datatype = 0x4c00041c;
        MPI_DOUBLE_PRECISION: MPI_Datatype = 0x4c00081f;
        MPI_COMPLEX: MPI_Datatype = 0x4c00081e;
        MPI_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001022;
        MPI_2INTEGER: MPI_Datatype = 0x4c000820;
        MPI_2REAL: MPI_Datatype = 0x4c000821;
        MPI_2DOUBLE_PRECISION: MPI_Datatype = 0x4c001023;
        MPI_INTEGER1: MPI_Datatype = 0x4c00012d;
        MPI_INTEGER2: MPI_Datatype = 0x4c00022f;
        MPI_INTEGER4: MPI_Datatype = 0x4c000430;
        MPI_INTEGER8: MPI_Datatype = 0x4c000831;
        MPI_REAL4: MPI_Datatype = 0x4c000427;
        MPI_REAL8: MPI_Datatype = 0x4c000829;
        MPI_REAL16: MPI_Datatype = 0x4c00102b;
        MPI_COMPLEX8: MPI_Datatype = 0x4c000828;
        MPI_COMPLEX16: MPI_Datatype = 0x4c00102a;
        MPI_COMPLEX32: MPI_Datatype = 0x4c00202c;

        // C++ datatypes.
        MPI_CXX_BOOL: MPI_Datatype = 0x4c000133;
        MPI_CXX_FLOAT_COMPLEX: MPI_Datatype = 0x4c000834;
        MPI_CXX_DOUBLE_COMPLEX: MPI_Datatype = 0x4c001035;
        MPI_CXX_LONG_DOUBLE_COMPLEX: MPI_Datatype = 0x4c002036;
    }
}

/// Whether `handle` has the bit pattern of a datatype handle (kind 3 in bits 26..29, as MPICH
/// encodes handles), `MPI_DATATYPE_NULL` included.
pub const fn is_datatype_handle(handle: c_int) -> bool {
    (handle as u32 >> 26) & 0xf == 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn status_has_the_mpich_layout() {
        assert_eq!(size_of::<MPI_Status>(), 20);
        assert_eq!(align_of::<MPI_Status>(), 4);
        assert_eq!(offset_of!(MPI_Status, count_lo), 0);
        assert_eq!(offset_of!(MPI_Status, count_hi_and_cancelled), 4);
        assert_eq!(offset_of!(MPI_Status, MPI_SOURCE), 8);
        assert_eq!(offset_of!(MPI_Status, MPI_TAG), 12);
        assert_eq!(offset_of!(MPI_Status, MPI_ERROR), 16);
    }

    #[test]
    fn status_count_and_cancelled_flag_share_a_field() {
        let mut s = MPI_Status::default();
        for bytes in
            [0, 1, 0x7fff_ffff, 0xffff_ffff, 0x1_0000_0000, 0x1234_5678_9abc, i32::MAX as i64 * 7]
        {
            for cancelled in [false, true] {
                s.set_cancelled(cancelled);
                s.set_byte_count(bytes);
                assert_eq!((s.byte_count(), s.cancelled()), (bytes, cancelled));
                s.set_cancelled(!cancelled);
                assert_eq!((s.byte_count(), s.cancelled()), (bytes, !cancelled));
            }
        }
        // MPICH's encoding: the high word sits above the flag.
        s.set_cancelled(true);
        s.set_byte_count(0x3_0000_0002);
        assert_eq!((s.count_lo, s.count_hi_and_cancelled), (2, 7));
    }

    #[test]
    fn pointer_constants_match_their_table() {
        let table: HashMap<_, _> = HEADER_POINTERS.iter().copied().collect();
        assert_eq!(table["MPI_BOTTOM"], MPI_BOTTOM.addr() as i64);
        assert_eq!(table["MPI_IN_PLACE"], MPI_IN_PLACE.addr() as isize as i64);
        assert_eq!(table["MPI_STATUS_IGNORE"], MPI_STATUS_IGNORE.addr() as i64);
        assert_eq!(table["MPI_STATUSES_IGNORE"], MPI_STATUSES_IGNORE.addr() as i64);
    }

    #[test]
    fn names_are_unique_across_tables() {
        let mut seen = std::collections::HashSet::new();
        for (name, _) in HEADER_CONSTANTS.iter().chain(HEADER_POINTERS).chain(MPICH_ONLY_CONSTANTS)
        {
            assert!(seen.insert(*name), "{name} listed twice");
        }
    }

    #[test]
    fn handle_types_have_the_c_sizes() {
        assert_eq!(size_of::<MPI_Comm>(), 4);
        assert_eq!(size_of::<MPI_Aint>(), 8);
        assert_eq!(size_of::<MPI_Offset>(), 8);
        assert_eq!(size_of::<MPI_Count>(), 8);
        assert_eq!(size_of::<MPI_Fint>(), 4);
        assert!(is_datatype_handle(MPI_DOUBLE_INT));
        assert!(is_datatype_handle(MPI_DATATYPE_NULL));
        assert!(!is_datatype_handle(MPI_COMM_WORLD));
    }
}
