//! The predefined datatypes behind MPICH's datatype handles, and the names and messages of the
//! error classes (for `MPI_Error_string` and fatal-error reports).

use std::sync::OnceLock;

use ferry_data::datatype::{Datatype, Primitive};

use crate::consts::*;

/// What a predefined handle stands for.
#[derive(Clone, Copy)]
enum Kind {
    Basic(Primitive),
    /// A value-and-index pair (`struct { value; index; }`).
    Pair(Primitive, Primitive),
    /// MPI-1's `MPI_LB` or `MPI_UB`: no data, extent 0; a struct given one takes its bound
    /// from it (`types::create_struct`).
    Marker,
}

use Kind::{Basic, Marker, Pair};
use Primitive as P;

/// Every predefined datatype handle with its canonical name. Aliases (`MPI_LONG_LONG`,
/// `MPI_C_FLOAT_COMPLEX`) share their handle with the name given; a handle not listed is not a
/// datatype Ferry knows.
const DATATYPES: &[(MPI_Datatype, &str, Kind)] = &[
    (MPI_CHAR, "MPI_CHAR", Basic(P::Char)),
    (MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", Basic(P::SignedChar)),
    (MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", Basic(P::UnsignedChar)),
    (MPI_BYTE, "MPI_BYTE", Basic(P::Byte)),
    (MPI_WCHAR, "MPI_WCHAR", Basic(P::WChar)),
    (MPI_SHORT, "MPI_SHORT", Basic(P::Short)),
    (MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", Basic(P::UnsignedShort)),
    (MPI_INT, "MPI_INT", Basic(P::Int)),
    (MPI_UNSIGNED, "MPI_UNSIGNED", Basic(P::Unsigned)),
    (MPI_LONG, "MPI_LONG", Basic(P::Long)),
    (MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", Basic(P::UnsignedLong)),
    (MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", Basic(P::LongLong)),
    (MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", Basic(P::UnsignedLongLong)),
    (MPI_FLOAT, "MPI_FLOAT", Basic(P::Float)),
    (MPI_DOUBLE, "MPI_DOUBLE", Basic(P::Double)),
    (MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", Basic(P::LongDouble)),
    (MPI_PACKED, "MPI_PACKED", Basic(P::Packed)),
    (MPI_LB, "MPI_LB", Marker),
    (MPI_UB, "MPI_UB", Marker),
    (MPI_INT8_T, "MPI_INT8_T", Basic(P::Int8)),
    (MPI_INT16_T, "MPI_INT16_T", Basic(P::Int16)),
    (MPI_INT32_T, "MPI_INT32_T", Basic(P::Int32)),
    (MPI_INT64_T, "MPI_INT64_T", Basic(P::Int64)),
    (MPI_UINT8_T, "MPI_UINT8_T", Basic(P::UInt8)),
    (MPI_UINT16_T, "MPI_UINT16_T", Basic(P::UInt16)),
    (MPI_UINT32_T, "MPI_UINT32_T", Basic(P::UInt32)),
    (MPI_UINT64_T, "MPI_UINT64_T", Basic(P::UInt64)),
    (MPI_C_BOOL, "MPI_C_BOOL", Basic(P::CBool)),
    // MPI_C_FLOAT_COMPLEX is the same handle; the name is the one MPICH gives it.
    (MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", Basic(P::CFloatComplex)),
    (MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", Basic(P::CDoubleComplex)),
    (MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", Basic(P::CLongDoubleComplex)),
    (MPI_AINT, "MPI_AINT", Basic(P::Aint)),
    (MPI_OFFSET, "MPI_OFFSET", Basic(P::Offset)),
    (MPI_COUNT, "MPI_COUNT", Basic(P::Count)),
    (MPIX_C_FLOAT16, "MPIX_C_FLOAT16", Basic(P::Float16)),
    (MPI_FLOAT_INT, "MPI_FLOAT_INT", Pair(P::Float, P::Int)),
    (MPI_DOUBLE_INT, "MPI_DOUBLE_INT", Pair(P::Double, P::Int)),
    (MPI_LONG_INT, "MPI_LONG_INT", Pair(P::Long, P::Int)),
    (MPI_SHORT_INT, "MPI_SHORT_INT", Pair(P::Short, P::Int)),
    (MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", Pair(P::LongDouble, P::Int)),
    (MPI_2INT, "MPI_2INT", Pair(P::Int, P::Int)),
    // Fortran and C++ types a program built against MPICH's header may pass; each has the
    // layout and arithmetic of the C type it maps to.
    (MPI_CHARACTER, "MPI_CHARACTER", Basic(P::Char)),
    (MPI_INTEGER, "MPI_INTEGER", Basic(P::Int)),
    (MPI_LOGICAL, "MPI_LOGICAL", Basic(P::Logical)),
    (MPI_REAL, "MPI_REAL", Basic(P::Float)),
    (MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", Basic(P::Double)),
    (MPI_COMPLEX, "MPI_COMPLEX", Basic(P::CFloatComplex)),
    (MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", Basic(P::CDoubleComplex)),
    (MPI_2INTEGER, "MPI_2INTEGER", Pair(P::Int, P::Int)),
    (MPI_2REAL, "MPI_2REAL", Pair(P::Float, P::Float)),
    (MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", Pair(P::Double, P::Double)),
    (MPI_INTEGER1, "MPI_INTEGER1", Basic(P::Int8)),
    (MPI_INTEGER2, "MPI_INTEGER2", Basic(P::Int16)),
    (MPI_INTEGER4, "MPI_INTEGER4", Basic(P::Int32)),
    (MPI_INTEGER8, "MPI_INTEGER8", Basic(P::Int64)),
    (MPI_REAL4, "MPI_REAL4", Basic(P::Float)),
    (MPI_REAL8, "MPI_REAL8", Basic(P::Double)),
    (MPI_COMPLEX8, "MPI_COMPLEX8", Basic(P::CFloatComplex)),
    (MPI_COMPLEX16, "MPI_COMPLEX16", Basic(P::CDoubleComplex)),
    // gfortran's REAL(16) is IEEE binary128 (C's `__float128`), not `long double`.
    (MPI_REAL16, "MPI_REAL16", Basic(P::Float128)),
    (MPI_COMPLEX32, "MPI_COMPLEX32", Basic(P::Float128Complex)),
    (MPI_CXX_BOOL, "MPI_CXX_BOOL", Basic(P::CBool)),
    (MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", Basic(P::CFloatComplex)),
    (MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", Basic(P::CDoubleComplex)),
    (MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", Basic(P::CLongDoubleComplex)),
];

/// The table of [`DATATYPES`] with their type maps built, sorted by handle.
fn table() -> &'static [(MPI_Datatype, &'static str, Datatype)] {
    static TABLE: OnceLock<Vec<(MPI_Datatype, &'static str, Datatype)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<_> = DATATYPES
            .iter()
            .map(|&(handle, name, kind)| {
                let datatype = match kind {
                    Basic(p) => Datatype::primitive(p),
                    Pair(value, index) => Datatype::pair(value, index),
                    Marker => Datatype::contiguous(0, &Datatype::primitive(P::Byte)).expect("no copies cannot overflow"),
                };
                (handle, name, datatype)
            })
            .collect();
        t.sort_by_key(|e| e.0);
        t
    })
}

/// The name and type map of a predefined datatype handle; `None` for any other handle,
/// `MPI_DATATYPE_NULL` included.
pub fn predefined_datatype(handle: MPI_Datatype) -> Option<(&'static str, Datatype)> {
    let t = table();
    let i = t.binary_search_by_key(&handle, |e| e.0).ok()?;
    Some((t[i].1, t[i].2.clone()))
}

/// The predefined datatypes that are one primitive each (pairs and markers excluded), in
/// handle order: the one-sided calls on shared windows look their datatype up here (and keep
/// its index) instead of building its type map.
pub fn primitives() -> &'static [(MPI_Datatype, Primitive)] {
    static BASIC: OnceLock<Vec<(MPI_Datatype, Primitive)>> = OnceLock::new();
    BASIC.get_or_init(|| {
        let mut t: Vec<_> = DATATYPES.iter().filter_map(|&(h, _, k)| if let Basic(p) = k { Some((h, p)) } else { None }).collect();
        t.sort_by_key(|e| e.0);
        t.dedup_by_key(|e| e.0);
        t
    })
}

/// Every predefined datatype: handle, canonical name, type map, in handle order.
pub fn predefined_datatypes() -> impl Iterator<Item = (MPI_Datatype, &'static str, Datatype)> {
    table().iter().map(|(h, n, d)| (*h, *n, d.clone()))
}

/// The `(value, index)` primitives of a MINLOC/MAXLOC pair type handle.
pub fn pair_type(handle: MPI_Datatype) -> Option<(Primitive, Primitive)> {
    DATATYPES.iter().find(|e| e.0 == handle).and_then(|e| match e.2 {
        Pair(value, index) => Some((value, index)),
        Basic(_) | Marker => None,
    })
}

/// Every error class: value, name, and the message `MPI_Error_string` gives for it.
const ERROR_CLASSES: &[(i32, &str, &str)] = &[
    (MPI_SUCCESS, "MPI_SUCCESS", "No error"),
    (MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "Invalid buffer pointer"),
    (MPI_ERR_COUNT, "MPI_ERR_COUNT", "Invalid count"),
    (MPI_ERR_TYPE, "MPI_ERR_TYPE", "Invalid datatype"),
    (MPI_ERR_TAG, "MPI_ERR_TAG", "Invalid tag"),
    (MPI_ERR_COMM, "MPI_ERR_COMM", "Invalid communicator"),
    (MPI_ERR_RANK, "MPI_ERR_RANK", "Invalid rank"),
    (MPI_ERR_ROOT, "MPI_ERR_ROOT", "Invalid root"),
    (MPI_ERR_GROUP, "MPI_ERR_GROUP", "Invalid group"),
    (MPI_ERR_OP, "MPI_ERR_OP", "Invalid reduction operation"),
    (MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "Invalid topology"),
    (MPI_ERR_DIMS, "MPI_ERR_DIMS", "Invalid dimension argument"),
    (MPI_ERR_ARG, "MPI_ERR_ARG", "Invalid argument"),
    (MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "Unknown error"),
    (MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "Message truncated: the receive buffer is too small"),
    (MPI_ERR_OTHER, "MPI_ERR_OTHER", "Other error"),
    (MPI_ERR_INTERN, "MPI_ERR_INTERN", "Internal error"),
    (MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS", "Error code is in the status"),
    (MPI_ERR_PENDING, "MPI_ERR_PENDING", "Request pending"),
    (MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "Invalid request"),
    (MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "Permission denied"),
    (MPI_ERR_AMODE, "MPI_ERR_AMODE", "Invalid file access mode"),
    (MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "Invalid file name"),
    (MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION", "Data conversion failed"),
    (MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP", "Data representation already defined"),
    (MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "File exists"),
    (MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "File in use"),
    (MPI_ERR_FILE, "MPI_ERR_FILE", "Invalid file handle"),
    (MPI_ERR_INFO, "MPI_ERR_INFO", "Invalid info object"),
    (MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "Invalid info key"),
    (MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE", "Invalid info value"),
    (MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY", "Info key not defined"),
    (MPI_ERR_IO, "MPI_ERR_IO", "I/O error"),
    (MPI_ERR_NAME, "MPI_ERR_NAME", "Invalid service name"),
    (MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "Out of memory"),
    (MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME", "Arguments differ between processes"),
    (MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "No space left on device"),
    (MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "No such file"),
    (MPI_ERR_PORT, "MPI_ERR_PORT", "Invalid port name"),
    (MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "Quota exceeded"),
    (MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY", "File is read-only"),
    (MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "Invalid service"),
    (MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "Could not spawn processes"),
    (MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP", "Unsupported data representation"),
    (MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION", "Unsupported operation"),
    (MPI_ERR_WIN, "MPI_ERR_WIN", "Invalid window"),
    (MPI_ERR_BASE, "MPI_ERR_BASE", "Invalid base address"),
    (MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "Invalid lock type"),
    (MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "Invalid attribute key"),
    (MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT", "Conflicting accesses to a window"),
    (MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC", "Wrong synchronization of RMA calls"),
    (MPI_ERR_SIZE, "MPI_ERR_SIZE", "Invalid size"),
    (MPI_ERR_DISP, "MPI_ERR_DISP", "Invalid displacement"),
    (MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "Invalid assertion"),
    (MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE", "Target memory is outside the window"),
    (MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH", "Memory cannot be attached"),
    (MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED", "Memory cannot be shared"),
    (MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR", "Wrong window flavor"),
    (MPI_T_ERR_MEMORY, "MPI_T_ERR_MEMORY", "Out of memory in the tool interface"),
    (MPI_T_ERR_NOT_INITIALIZED, "MPI_T_ERR_NOT_INITIALIZED", "Tool interface not initialized"),
    (MPI_T_ERR_CANNOT_INIT, "MPI_T_ERR_CANNOT_INIT", "Tool interface cannot be initialized"),
    (MPI_T_ERR_INVALID_INDEX, "MPI_T_ERR_INVALID_INDEX", "Invalid tool variable index"),
    (MPI_T_ERR_INVALID_ITEM, "MPI_T_ERR_INVALID_ITEM", "Invalid tool item"),
    (MPI_T_ERR_INVALID_HANDLE, "MPI_T_ERR_INVALID_HANDLE", "Invalid tool handle"),
    (MPI_T_ERR_OUT_OF_HANDLES, "MPI_T_ERR_OUT_OF_HANDLES", "No more tool handles"),
    (MPI_T_ERR_OUT_OF_SESSIONS, "MPI_T_ERR_OUT_OF_SESSIONS", "No more tool sessions"),
    (MPI_T_ERR_INVALID_SESSION, "MPI_T_ERR_INVALID_SESSION", "Invalid tool session"),
    (
        MPI_T_ERR_CVAR_SET_NOT_NOW,
        "MPI_T_ERR_CVAR_SET_NOT_NOW",
        "Control variable cannot be set now",
    ),
    (MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_ERR_CVAR_SET_NEVER", "Control variable cannot be set"),
    (
        MPI_T_ERR_PVAR_NO_STARTSTOP,
        "MPI_T_ERR_PVAR_NO_STARTSTOP",
        "Performance variable cannot be started or stopped",
    ),
    (MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_ERR_PVAR_NO_WRITE", "Performance variable cannot be written"),
    (
        MPI_T_ERR_PVAR_NO_ATOMIC,
        "MPI_T_ERR_PVAR_NO_ATOMIC",
        "Performance variable cannot be read and written atomically",
    ),
    (MPI_T_ERR_INVALID_NAME, "MPI_T_ERR_INVALID_NAME", "Invalid tool variable name"),
    (MPI_T_ERR_INVALID, "MPI_T_ERR_INVALID", "Invalid use of the tool interface"),
    (MPI_ERR_SESSION, "MPI_ERR_SESSION", "Invalid session"),
    (MPI_ERR_PROC_ABORTED, "MPI_ERR_PROC_ABORTED", "A peer process has aborted"),
    (MPI_ERR_VALUE_TOO_LARGE, "MPI_ERR_VALUE_TOO_LARGE", "Value too large"),
    (MPI_T_ERR_NOT_SUPPORTED, "MPI_T_ERR_NOT_SUPPORTED", "Not supported by the tool interface"),
    // Fault-tolerant MPI's classes, at MPICH's values (docs/fault-tolerance.md).
    (MPIX_ERR_PROC_FAILED, "MPIX_ERR_PROC_FAILED", "Process failure"),
    (MPIX_ERR_PROC_FAILED_PENDING, "MPIX_ERR_PROC_FAILED_PENDING", "A process failed: a receive from any source cannot tell whether its message will come"),
    (MPIX_ERR_REVOKED, "MPIX_ERR_REVOKED", "The communicator was revoked"),
];

fn error_class(class: i32) -> Option<&'static (i32, &'static str, &'static str)> {
    // Classes are 0..=78 with one gap (54), then MPICH's 101..=103; the table is in class order.
    let i = ERROR_CLASSES.partition_point(|e| e.0 < class);
    ERROR_CLASSES.get(i).filter(|e| e.0 == class)
}

/// The name of an error class (`"MPI_ERR_COMM"`); `None` for a value that is no class.
pub fn error_class_name(class: i32) -> Option<&'static str> {
    error_class(class).map(|e| e.1)
}

/// The one-line message `MPI_Error_string` gives for an error class (`"Invalid
/// communicator"`); a value that is no class gets the message of `MPI_ERR_UNKNOWN`.
pub fn error_string(class: i32) -> &'static str {
    error_class(class).or_else(|| error_class(MPI_ERR_UNKNOWN)).map_or("Unknown error", |e| e.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Handles listed in `consts` that deliberately have no type map.
    const UNMAPPED: &[&str] = &["MPI_DATATYPE_NULL"];

    #[test]
    fn every_datatype_handle_resolves_with_the_size_its_handle_encodes() {
        let all = HEADER_CONSTANTS.iter().chain(MPICH_ONLY_CONSTANTS);
        let mut checked = 0;
        for &(name, value) in all {
            let handle = value as i32;
            if !is_datatype_handle(handle) || UNMAPPED.contains(&name) {
                continue;
            }
            let (canonical, t) =
                predefined_datatype(handle).unwrap_or_else(|| panic!("{name} not mapped"));
            assert!(name == canonical || ["MPI_LONG_LONG", "MPI_C_FLOAT_COMPLEX"].contains(&name));
            // Builtin handles (0x4c......) carry the size in bits 8..15; the 0x8c...... pair
            // handles do not.
            if (handle as u32) >> 24 == 0x4c {
                assert_eq!(t.size(), (handle as usize >> 8) & 0xff, "{name}");
            }
            checked += 1;
        }
        assert_eq!(checked, predefined_datatypes().count() + 2);
        for name in UNMAPPED {
            let value = HEADER_CONSTANTS.iter().chain(MPICH_ONLY_CONSTANTS).find(|e| e.0 == *name);
            assert!(predefined_datatype(value.expect("listed").1 as i32).is_none());
        }
    }

    #[test]
    fn pair_types_have_mpich_extents() {
        let cases = [
            (MPI_FLOAT_INT, 8, 8),
            (MPI_DOUBLE_INT, 12, 16),
            (MPI_LONG_INT, 12, 16),
            (MPI_SHORT_INT, 6, 8),
            (MPI_2INT, 8, 8),
            (MPI_LONG_DOUBLE_INT, 20, 32),
        ];
        for (handle, size, extent) in cases {
            let (_, t) = predefined_datatype(handle).unwrap();
            assert_eq!((t.size(), t.lb(), t.extent()), (size, 0, extent));
            assert!(pair_type(handle).is_some());
        }
        assert_eq!(pair_type(MPI_DOUBLE_INT), Some((Primitive::Double, Primitive::Int)));
        assert_eq!(pair_type(MPI_DOUBLE), None);
    }

    #[test]
    fn lookups_reject_other_handles() {
        assert!(predefined_datatype(MPI_DATATYPE_NULL).is_none());
        assert!(predefined_datatype(MPI_COMM_WORLD).is_none());
        assert!(predefined_datatype(0).is_none());
        let (name, t) = predefined_datatype(MPI_LONG_LONG).unwrap();
        assert_eq!((name, t.size()), ("MPI_LONG_LONG_INT", 8));
    }

    #[test]
    fn every_error_class_has_a_name_and_a_message() {
        let classes: Vec<_> = HEADER_CONSTANTS
            .iter()
            .filter(|(n, _)| {
                (n.starts_with("MPI_ERR_") || n.starts_with("MPI_T_ERR_"))
                    && *n != "MPI_ERR_LASTCODE"
            })
            .chain([&("MPI_SUCCESS", 0)])
            // Fault tolerance's classes are in mpi-ext.h.
            .chain([&("MPIX_ERR_PROC_FAILED", 101), &("MPIX_ERR_PROC_FAILED_PENDING", 102), &("MPIX_ERR_REVOKED", 103)])
            .collect();
        assert_eq!(classes.len(), ERROR_CLASSES.len());
        for &&(name, value) in &classes {
            assert_eq!(error_class_name(value as i32), Some(name));
            let message = error_string(value as i32);
            assert!(!message.is_empty() && !message.contains('\n'));
            assert!(message.len() < MPI_MAX_ERROR_STRING as usize);
        }
        assert!(ERROR_CLASSES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(error_class_name(54), None);
        assert_eq!(error_class_name(-1), None);
        assert_eq!(error_class_name(79), None);
        assert_eq!(error_class_name(MPI_ERR_LASTCODE), None);
        assert_eq!(error_string(MPI_ERR_COMM), "Invalid communicator");
        assert_eq!(error_string(54), "Unknown error");
    }
}
