//! How each C parameter is seen from Fortran. Fortran passes everything by reference; INTEGER
//! handles are MPICH's C handle values, so most arguments need no conversion at all: a value
//! is read through its pointer and an output is the same pointer. What does need work is
//! named here: choice buffers (MPI_BOTTOM, MPI_IN_PLACE), statuses (MPI_STATUS_IGNORE),
//! CHARACTER arguments (hidden lengths, blank padding), 1-based indices, and arguments that
//! have no Fortran counterpart. A parameter this table does not know leaves its function
//! without a Fortran binding (listed as skipped) rather than bound wrongly.

use crate::header::{Param, Proto};

/// One parameter of a binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// An INTEGER (a count, rank, tag or handle) the C function takes by value.
    Value,
    /// An INTEGER(KIND=MPI_ADDRESS_KIND or MPI_COUNT_KIND) the C function takes by value; the
    /// C type of the value.
    Wide(&'static str),
    /// The same memory on both sides: an output, an array, an address-sized output. The C
    /// type the Fortran argument is declared with (`MPI_Fint`, `MPI_Aint`, `void`).
    Same(&'static str),
    /// A choice buffer, where MPI_BOTTOM and MPI_IN_PLACE are recognised by address.
    Buffer,
    /// One status; MPI_STATUS_IGNORE recognised by address.
    Status,
    /// An array of statuses; MPI_STATUSES_IGNORE recognised by address.
    Statuses,
    /// A weights array of a distributed graph; MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY
    /// recognised by address.
    Weights,
    /// The `ranges(3, n)` array of the group range functions.
    Ranges,
    /// A CHARACTER input, copied without its trailing blanks (and leading ones where the
    /// standard strips them: info keys and values).
    StrIn { trim_leading: bool },
    /// A CHARACTER output the C function writes NUL-terminated into a buffer of `size` (a C
    /// expression) bytes; copied back blank-padded, only when `copy_if` (a C expression) holds.
    StrOut {
        size: String,
        copy_if: Option<String>,
    },
    /// A procedure whose Fortran form has the C calling convention already (every argument
    /// by reference, no result): passed as it is; its C type.
    Procedure(String),
    /// A C argument with no Fortran counterpart (argc, argv): NULL.
    Omitted,
    /// MPI_Buffer_detach's address output, which Fortran has no use for.
    DiscardedAddress,
    /// A 0-based index the C function returns; Fortran's is 1-based (MPI_UNDEFINED stays).
    IndexOut,
    /// 0-based indices, as many as the named output count says.
    IndicesOut { count: String },
}

/// What the Fortran procedure gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    /// A subroutine with IERROR last.
    Ierror,
    /// A function with the C result type (MPI_Wtime, MPI_Aint_add).
    Value(&'static str),
}

/// A bound function: its C name, the C parameters with their Fortran treatment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub c_name: String,
    pub ret: Ret,
    pub args: Vec<(Param, Arg)>,
}

/// Functions bound by hand in `c/` (attribute values, callbacks with a Fortran calling
/// convention of their own, MPI_Info_get_string's lengths, the variadic MPI_Pcontrol); the
/// generator leaves them alone.
pub const HAND_WRITTEN: &[&str] = &[
    "MPI_Comm_create_keyval",
    "MPI_Comm_set_attr",
    "MPI_Comm_get_attr",
    "MPI_Type_create_keyval",
    "MPI_Type_set_attr",
    "MPI_Type_get_attr",
    "MPI_Attr_put",
    "MPI_Attr_get",
    "MPI_Grequest_start",
    "MPI_Info_get_string",
    "MPI_Pcontrol",
];

/// C functions whose Fortran form is not the one the generator would write: the C/Fortran
/// status conversions are C only in the standard, and the MPI-1 names below take a default
/// INTEGER in Fortran where C takes an `MPI_Aint`, which needs a conversion by hand.
const NOT_GENERATED: &[(&str, &str)] = &[
    ("MPI_Status_c2f", "a C-only conversion"),
    ("MPI_Status_f2c", "a C-only conversion"),
    ("MPI_Status_f082c", "a C-only conversion"),
    ("MPI_Status_c2f08", "a C-only conversion"),
    ("MPI_Status_f082f", "a C-only conversion"),
    ("MPI_Status_f2f08", "a C-only conversion"),
    ("MPI_Address", "an MPI-1 name whose Fortran form takes a default INTEGER for the MPI_Aint"),
    ("MPI_Type_extent", "an MPI-1 name whose Fortran form takes a default INTEGER for the MPI_Aint"),
    ("MPI_Type_lb", "an MPI-1 name whose Fortran form takes a default INTEGER for the MPI_Aint"),
    ("MPI_Type_ub", "an MPI-1 name whose Fortran form takes a default INTEGER for the MPI_Aint"),
    ("MPI_Type_hvector", "an MPI-1 name whose Fortran form takes a default INTEGER for the MPI_Aint"),
    ("MPI_Type_hindexed", "an MPI-1 name whose Fortran form takes default INTEGERs for the MPI_Aints"),
    ("MPI_Type_struct", "an MPI-1 name whose Fortran form takes default INTEGERs for the MPI_Aints"),
];

/// C types that are an INTEGER in Fortran (MPICH's handles are ints).
const INTEGER_TYPES: &[&str] = &[
    "int",
    "MPI_Fint",
    "MPI_Comm",
    "MPI_Datatype",
    "MPI_Info",
    "MPI_Op",
    "MPI_Group",
    "MPI_Request",
    "MPI_Errhandler",
    "MPI_Message",
    "MPI_Win",
    "MPI_Session",
];
/// C types that are an INTEGER(KIND=MPI_ADDRESS_KIND / MPI_OFFSET_KIND / MPI_COUNT_KIND).
const WIDE_TYPES: &[&str] = &["MPI_Aint", "MPI_Offset", "MPI_Count"];
/// Names of `void *` parameters that are choice buffers.
const BUFFER_NAMES: &[&str] = &[
    "buf",
    "sendbuf",
    "recvbuf",
    "buffer",
    "inbuf",
    "outbuf",
    "inoutbuf",
    "location",
    "base",
    "origin_addr",
    "result_addr",
    "compare_addr",
];
/// Procedure types whose Fortran form has the C form's calling convention.
const PROCEDURE_TYPES: &[&str] = &[
    "MPI_User_function",
    "MPI_Comm_errhandler_function",
    "MPI_Win_errhandler_function",
];

/// The binding of `proto`, or why it has none.
pub fn classify(proto: &Proto) -> Result<Binding, String> {
    if proto.name.ends_with("_c") {
        return Err("a large-count variant, which mpif.h and the mpi module do not have".into());
    }
    if proto.name.starts_with("MPI_T_") {
        return Err("the tools interface, which is C only".into());
    }
    if let Some((_, why)) = NOT_GENERATED.iter().find(|(n, _)| *n == proto.name) {
        return Err((*why).into());
    }
    let ret = match proto.ret.as_str() {
        "int" => Ret::Ierror,
        "double" => Ret::Value("double"),
        "MPI_Aint" => Ret::Value("MPI_Aint"),
        other => return Err(format!("result type {other}")),
    };
    let mut args = Vec::new();
    for (i, p) in proto.params.iter().enumerate() {
        let next = proto.params.get(i + 1);
        let prev = i.checked_sub(1).map(|j| &proto.params[j]);
        let arg = classify_param(&proto.name, p, prev, next)
            .ok_or_else(|| format!("parameter {} of type {}", p.name, p.ty))?;
        args.push((p.clone(), arg));
    }
    Ok(Binding {
        c_name: proto.name.clone(),
        ret,
        args,
    })
}

fn classify_param(
    func: &str,
    p: &Param,
    prev: Option<&Param>,
    next: Option<&Param>,
) -> Option<Arg> {
    let is_const = p.ty.starts_with("const ");
    let ty = p.ty.trim_start_matches("const ");
    let (base, ptr) = match ty.strip_suffix(" *").or_else(|| ty.strip_suffix("[]")) {
        Some(b) => (b, true),
        None => (ty, false),
    };
    let name = p.name.as_str();
    // MPI_Init's argc and argv: Fortran's MPI_INIT has neither.
    if (name == "argc" && ty == "int *" && next.is_some_and(|n| n.ty == "char ***"))
        || (ty == "char ***" && prev.is_some_and(|q| q.name == "argc"))
    {
        return Some(Arg::Omitted);
    }
    if ty == "int[][3]" {
        return Some(Arg::Ranges);
    }
    if !ptr {
        if INTEGER_TYPES.contains(&base) {
            return Some(Arg::Value);
        }
        return WIDE_TYPES
            .iter()
            .find(|&&w| w == base)
            .map(|&w| Arg::Wide(w));
    }
    match base {
        "void" if BUFFER_NAMES.contains(&name) => Some(Arg::Buffer),
        // Where the library stores an address (MPI_Alloc_mem): an address-sized INTEGER.
        "void" if name == "baseptr" => Some(Arg::Same("void")),
        "void" if name == "buffer_addr" => Some(Arg::DiscardedAddress),
        "MPI_Status" => Some(if ty.ends_with("[]") {
            Arg::Statuses
        } else {
            Arg::Status
        }),
        "int" if name.ends_with("weights") => Some(Arg::Weights),
        "int" if name == "indx" && matches!(func, "MPI_Waitany" | "MPI_Testany") => {
            Some(Arg::IndexOut)
        }
        "int" if name == "array_of_indices" => Some(Arg::IndicesOut {
            count: "outcount".into(),
        }),
        "char" if is_const => Some(Arg::StrIn {
            trim_leading: func.starts_with("MPI_Info_"),
        }),
        "char" => string_out(func, name),
        b if INTEGER_TYPES.contains(&b) => Some(Arg::Same("MPI_Fint")),
        b if WIDE_TYPES.contains(&b) => WIDE_TYPES.iter().find(|&&w| w == b).map(|&w| Arg::Same(w)),
        b if PROCEDURE_TYPES.contains(&b) && ty.ends_with(" *") => {
            Some(Arg::Procedure(ty.to_string()))
        }
        _ => None,
    }
}

/// The C buffer size of a CHARACTER output, where the standard fixes it.
fn string_out(func: &str, name: &str) -> Option<Arg> {
    let fixed = |size: &str| {
        Some(Arg::StrOut {
            size: size.into(),
            copy_if: None,
        })
    };
    match (func, name) {
        ("MPI_Get_processor_name", "name") => fixed("MPI_MAX_PROCESSOR_NAME"),
        ("MPI_Get_library_version", "version") => fixed("MPI_MAX_LIBRARY_VERSION_STRING"),
        ("MPI_Error_string", "string") => fixed("MPI_MAX_ERROR_STRING"),
        ("MPI_Info_get_nthkey", "key") => fixed("MPI_MAX_INFO_KEY + 1"),
        // The value is written only when the key is there; the output keeps its old contents
        // otherwise, as in C.
        ("MPI_Info_get", "value") => Some(Arg::StrOut {
            size: "(*valuelen > 0 ? *valuelen : 0) + 1".into(),
            copy_if: Some("*flag".into()),
        }),
        (f, n) if f.ends_with("_get_name") && n.ends_with("_name") => fixed("MPI_MAX_OBJECT_NAME"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::parse;

    fn bind(c: &str) -> Result<Binding, String> {
        classify(&parse(c)[0])
    }
    fn kinds(c: &str) -> Vec<Arg> {
        bind(c).unwrap().args.into_iter().map(|(_, a)| a).collect()
    }

    #[test]
    fn point_to_point_arguments() {
        let k = kinds("int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status);");
        assert_eq!(
            k,
            vec![
                Arg::Buffer,
                Arg::Value,
                Arg::Value,
                Arg::Value,
                Arg::Value,
                Arg::Value,
                Arg::Status
            ]
        );
        let k = kinds("int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);");
        assert_eq!(k, vec![Arg::Value, Arg::Same("MPI_Fint"), Arg::Statuses]);
    }

    #[test]
    fn init_drops_argc_and_argv() {
        let k = kinds("int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);");
        assert_eq!(
            k,
            vec![
                Arg::Omitted,
                Arg::Omitted,
                Arg::Value,
                Arg::Same("MPI_Fint")
            ]
        );
    }

    #[test]
    fn indices_become_one_based() {
        let k = kinds("int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status);");
        assert_eq!(k[2], Arg::IndexOut);
        let k = kinds("int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]);");
        assert_eq!(
            k[3],
            Arg::IndicesOut {
                count: "outcount".into()
            }
        );
    }

    #[test]
    fn strings_and_wide_integers() {
        let k = kinds("int MPI_Info_set(MPI_Info info, const char *key, const char *value);");
        assert_eq!(k[1], Arg::StrIn { trim_leading: true });
        let k = kinds("int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name);");
        assert_eq!(
            k[1],
            Arg::StrIn {
                trim_leading: false
            }
        );
        let k =
            kinds("int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);");
        assert_eq!(
            k[1],
            Arg::StrOut {
                size: "MPI_MAX_OBJECT_NAME".into(),
                copy_if: None
            }
        );
        let k = kinds("int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype);");
        assert_eq!(k[2], Arg::Wide("MPI_Aint"));
        let b = bind("MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);").unwrap();
        assert_eq!(b.ret, Ret::Value("MPI_Aint"));
    }

    #[test]
    fn unknown_shapes_are_refused() {
        assert!(bind("int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag);").is_err());
        assert!(bind(
            "int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);"
        )
        .is_err());
        assert!(bind("int MPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);").is_err());
        assert!(bind("int MPI_T_cvar_get_num(int *num_cvar);").is_err());
        assert!(bind("int MPI_Address(void *location, MPI_Aint *address);").is_err());
        assert!(bind("int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, void *extra_state, MPI_Request *request);").is_err());
        assert!(bind("int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);").is_err());
        assert!(bind("int MPI_Pcontrol(const int level, ...);").is_err());
    }
}
