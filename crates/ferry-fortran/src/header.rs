//! Reads the prototypes of Ferry's C header (`include/ferry_mpi_functions.h`): the header is
//! hand-written in one regular style, so a prototype is `RET NAME(PARAMS);` over one or more
//! lines, and each parameter is a type followed by a name and possibly `[]` or `[][3]`.

/// One C parameter: its type with `const` and the array brackets kept (`const int[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub ty: String,
    pub name: String,
}

/// One C prototype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proto {
    pub ret: String,
    pub name: String,
    pub params: Vec<Param>,
}

/// Every `MPI_`/`PMPI_` prototype of `text`, in order; anything else (comments, macros,
/// typedefs) is passed over.
pub fn parse(text: &str) -> Vec<Proto> {
    let text = strip_comments(text);
    let mut protos = Vec::new();
    let mut statement = String::new();
    for line in text.lines() {
        let line = line.trim();
        if statement.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        statement.push(' ');
        statement.push_str(line);
        if line.ends_with(';') {
            if let Some(proto) = parse_statement(statement.trim()) {
                protos.push(proto);
            }
            statement.clear();
        }
    }
    protos
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        match rest[start..].find("*/") {
            Some(end) => rest = &rest[start + end + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// A prototype from one statement, or None when the statement declares no MPI function. A
/// parameter this reader cannot take apart (a variadic `...`, a function pointer written out)
/// is kept with an "unreadable" type, which leaves its function unbound, not the build broken.
fn parse_statement(s: &str) -> Option<Proto> {
    let (open, close) = (s.find('(')?, s.rfind(')')?);
    let head = s[..open].trim();
    let split = head.rfind([' ', '*'])?;
    let name = head[split + 1..].to_string();
    if !(name.starts_with("MPI_") || name.starts_with("PMPI_")) || head.starts_with("typedef") {
        return None;
    }
    let ret = head[..=split].trim().to_string();
    let inside = s[open + 1..close].trim();
    let mut params = Vec::new();
    if inside.contains('(') {
        params.push(Param {
            ty: format!("unreadable `{inside}`"),
            name: "?".into(),
        });
    } else if inside != "void" && !inside.is_empty() {
        for p in inside.split(',') {
            params.push(parse_param(p).unwrap_or_else(|| Param {
                ty: format!("unreadable `{}`", p.trim()),
                name: "?".into(),
            }));
        }
    }
    Some(Proto { ret, name, params })
}

/// `const int ranks[]` -> type `const int[]`, name `ranks`; `char ***argv` -> `char ***`.
fn parse_param(p: &str) -> Option<Param> {
    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
    let (decl, dims) = match p.find('[') {
        Some(i) => (p[..i].trim().to_string(), p[i..].replace(' ', "")),
        None => (p.clone(), String::new()),
    };
    let split = decl.rfind([' ', '*'])?;
    let name = decl[split + 1..].to_string();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let base = decl[..=split].trim();
    // Normalise "int *" / "int*" to "int *" and keep array brackets after the base type.
    let stars = base
        .chars()
        .rev()
        .take_while(|&c| c == '*' || c == ' ')
        .filter(|&c| c == '*')
        .count();
    let core = base.trim_end_matches(['*', ' ']);
    let ty = match (stars, dims.is_empty()) {
        (0, true) => core.to_string(),
        (0, false) => format!("{core}{dims}"),
        (n, true) => format!("{core} {}", "*".repeat(n)),
        (n, false) => format!("{core} {}{dims}", "*".repeat(n)),
    };
    Some(Param { ty, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_multi_line_prototypes_and_array_parameters() {
        let text = "/* a comment int MPI_Fake(int x); */\n#define X 1\n\
                    int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,\n\
                    \x20            int tag, MPI_Comm comm);\n\
                    double MPI_Wtime(void);\n\
                    int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);\n\
                    typedef int(MPI_Foo)(int x);\n";
        let protos = parse(text);
        assert_eq!(protos.len(), 3);
        assert_eq!(protos[0].name, "MPI_Send");
        assert_eq!(
            protos[0].params[0],
            Param {
                ty: "const void *".into(),
                name: "buf".into()
            }
        );
        assert_eq!(
            protos[0].params[5],
            Param {
                ty: "MPI_Comm".into(),
                name: "comm".into()
            }
        );
        assert_eq!(protos[1].ret, "double");
        assert!(protos[1].params.is_empty());
        assert_eq!(
            protos[2].params[2],
            Param {
                ty: "int[][3]".into(),
                name: "ranges".into()
            }
        );
        assert_eq!(protos[2].params[3].ty, "MPI_Group *");
    }

    #[test]
    fn unreadable_parameters_are_kept_as_such() {
        let protos =
            parse("int MPI_Pcontrol(const int level, ...);\nint MPI_F(void (*f)(int, int));");
        assert_eq!(protos.len(), 2);
        assert_eq!(protos[0].params[1].ty, "unreadable `...`");
        assert!(protos[1].params[0].ty.starts_with("unreadable"));
    }

    #[test]
    fn reads_pointer_to_pointer_and_const_arrays() {
        let protos = parse("int MPI_Init(int *argc, char ***argv);\nint MPI_X(const int a[]);");
        assert_eq!(
            protos[0].params[1],
            Param {
                ty: "char ***".into(),
                name: "argv".into()
            }
        );
        assert_eq!(protos[1].params[0].ty, "const int[]");
    }
}
