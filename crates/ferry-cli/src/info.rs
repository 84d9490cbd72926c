//! `ferry info`: what this build is and how it is configured, in the manner of `ompi_info`.
//! The report is a list of sections; transports and algorithms get theirs as they land.

use ferry_core::config::KNOBS;

/// The whole report.
pub fn render() -> String {
    let sections: [fn() -> String; 5] = [build_section, transports_section, knobs_section, algorithms_section, decisions_section];
    sections.iter().map(|section| section()).collect::<Vec<_>>().join("\n")
}

fn build_section() -> String {
    let profile = if cfg!(debug_assertions) { "debug" } else { "release" };
    let rows = vec![
        vec!["build".to_owned(), format!("{profile}, {}-{}", std::env::consts::ARCH, std::env::consts::OS)],
        vec!["bootstrap".to_owned(), "PMI-1.1 (client and `ferry run` server; also runs under Hydra)".to_owned()],
    ];
    format!("Ferry {}\n{}", env!("CARGO_PKG_VERSION"), table(&rows))
}

fn transports_section() -> String {
    use ferry_core::transport::shm;
    let cma = shm::cma_support();
    let single = if cma.available { "available".to_owned() } else { format!("unavailable: {}", cma.detail) };
    let large = match ferry_core::config::shm_single_copy().unwrap_or(None).filter(|_| cma.available) {
        Some(usize::MAX) => format!("single copy: the receiver reads the sender's buffer with process_vm_readv (single copy {single})"),
        Some(max) => format!("single copy (process_vm_readv by the receiver) up to {max} bytes, longer ones pipelined through the ring, both sides copying at once (single copy {single}; FERRY_SHM_SINGLE_COPY_MAX)"),
        None => format!("pipelined copy through the ring, both sides copying at once (single copy {single}; FERRY_SHM_SINGLE_COPY=1 selects it)"),
    };
    let rows = vec![
        vec!["tcp".to_owned(), "between hosts (and between all ranks with FERRY_TRANSPORTS=tcp); authenticated connections".to_owned()],
        vec!["shm".to_owned(), "between ranks of one host: a ring per ordered pair in /dev/shm; a sleeping rank is woken by a datagram on its wake-up socket".to_owned()],
        vec!["shm large messages".to_owned(), large],
    ];
    format!("Transports (detected on this host)\n{}", table(&rows))
}

fn knobs_section() -> String {
    let mut rows = vec![["KNOB", "VALUE", "SOURCE", "DEFAULT", "MEANING"].map(str::to_owned).to_vec()];
    for knob in KNOBS {
        let shown = |v: &str| if v.is_empty() { "(empty)".to_owned() } else { v.to_owned() };
        rows.push(vec![
            knob.name.to_owned(),
            shown(&knob.value()),
            if knob.is_set() { "env" } else { "default" }.to_owned(),
            shown(knob.default),
            knob.meaning.to_owned(),
        ]);
    }
    format!("Configuration (environment variables)\n{}", table(&rows))
}

fn algorithms_section() -> String {
    let mut rows = vec![["ALGORITHM", "ORDERED", "V", "DESCRIPTION"].map(str::to_owned).to_vec()];
    for a in ferry_coll::algorithms() {
        use ferry_coll::Collective::*;
        let reduces = matches!(a.collective, Reduce | Allreduce | ReduceScatter | Scan | Exscan);
        let ordered = match (reduces, a.ordered) {
            (false, _) => "-",
            (true, true) => "yes",
            (true, false) => "no",
        };
        let varying = if a.varying { "yes" } else { "no" };
        rows.push(vec![a.id.to_owned(), ordered.to_owned(), varying.to_owned(), a.description.to_owned()]);
    }
    format!(
        "Collective algorithms (ORDERED: keeps operand order, safe for non-commutative operations; \
         V: serves the v-variant, irregular blocks)\n{}",
        table(&rows)
    )
}

/// The decision table in force (the built-in one, or the file `FERRY_COLL_TABLE` names),
/// row by row, first match wins.
fn decisions_section() -> String {
    decisions_for(&ferry_core::config::COLL_TABLE.value())
}

/// The decision-table section when `FERRY_COLL_TABLE` is `path` (empty: the built-in table).
fn decisions_for(path: &str) -> String {
    use ferry_coll::select::Table;
    use ferry_core::config::load_coll_table;
    let (source, loaded) = if path.trim().is_empty() {
        ("built-in (crates/ferry-coll/decisions.table)".to_owned(), Ok(Table::builtin().clone()))
    } else {
        (format!("file {} (FERRY_COLL_TABLE)", path.trim()), load_coll_table(path.trim()))
    };
    let in_force = match loaded {
        Ok(t) => t,
        Err(e) => return format!("Decision table in force: none: {e}; MPI_Init fails with this message\n"),
    };
    let mut rows = vec![["CALL", "RANKS", "BYTES", "ALGORITHMS"].map(str::to_owned).to_vec()];
    for row in in_force.rows() {
        let names: Vec<&str> = row.algorithms.iter().map(|a| a.id.split_once('.').map_or(a.id, |(_, n)| n)).collect();
        rows.push(vec![row.call.name().to_owned(), row.ranks.to_string(), row.bytes.to_string(), names.join(", ")]);
    }
    format!(
        "Decision table in force: {source}\n\
         The first row that matches decides; of its algorithms the first that applies\n\
         runs (FERRY_<COLL>_ALGORITHM replaces the list). BYTES is the bytes of one rank's block: the\n\
         message (bcast), one rank's block (scatter, gather, allgather), each rank's vector (reduce,\n\
         allreduce, scan, exscan), one rank's share (reduce_scatter_block; reduce_scatter and\n\
         allgatherv: the mean), the block for one destination (alltoall); gatherv, scatterv and\n\
         alltoallv match on the communicator size only.\n{}",
        table(&rows)
    )
}

/// Rows as left-aligned columns two spaces apart, indented by two; the last column is not
/// padded.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..columns).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            if c + 1 < row.len() {
                line.push_str(&format!("{cell:<width$}  ", width = widths[c]));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let rows = vec![
            vec!["A".to_owned(), "long value".to_owned(), "x".to_owned()],
            vec!["BBBB".to_owned(), "v".to_owned(), "y".to_owned()],
        ];
        assert_eq!(table(&rows), "  A     long value  x\n  BBBB  v           y\n");
    }

    #[test]
    fn lists_every_algorithm_and_table_row() {
        let report = render();
        for a in ferry_coll::algorithms() {
            assert!(report.lines().any(|l| l.trim_start().starts_with(&format!("{} ", a.id))), "{}", a.id);
        }
        assert!(report.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["bcast", "*", "0..4K", "shm,", "binomial"]));
    }

    #[test]
    fn says_which_decision_table_is_in_force() {
        let builtin = decisions_for("");
        assert!(builtin.starts_with("Decision table in force: built-in (crates/ferry-coll/decisions.table)\n"), "{builtin}");
        let path = std::env::temp_dir().join(format!("ferry-info-table-{}", std::process::id()));
        std::fs::write(&path, "bcast * * binomial\n").unwrap();
        let file = decisions_for(path.to_str().unwrap());
        assert!(file.starts_with(&format!("Decision table in force: file {} (FERRY_COLL_TABLE)\n", path.display())), "{file}");
        assert!(file.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["bcast", "*", "*", "binomial"]), "{file}");
        assert_eq!(file.lines().filter(|l| l.starts_with("  ")).count(), 2, "the header and the file's one row: {file}");
        std::fs::write(&path, "bcast * * binomial\nbcast x * binomial\n").unwrap();
        let bad = decisions_for(path.to_str().unwrap());
        assert!(bad.contains(&format!("FERRY_COLL_TABLE={}: line 2: ranks:", path.display())), "{bad}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn lists_every_knob() {
        let report = render();
        assert!(report.starts_with(&format!("Ferry {}\n", env!("CARGO_PKG_VERSION"))));
        for knob in KNOBS {
            assert!(report.lines().any(|l| l.trim_start().starts_with(knob.name) && l.ends_with(knob.meaning)), "{}", knob.name);
        }
    }
}
