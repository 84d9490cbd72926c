//! `ferry coll`: the collective algorithms of `ferry_coll` from the command line. `list`
//! shows the registry; `goal` writes one algorithm's schedules for a given communicator as a
//! GOAL text file, so LogGOPSim (or any GOAL reader) can simulate exactly what Ferry runs.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use ferry_coll::{algorithm, algorithms, goal, AlgorithmInfo, Collective, Params};

use crate::info::table;

/// Largest communicator `goal` exports: the schedule validator keeps tables of size p².
pub const MAX_PROCS: usize = 1024;

#[derive(Subcommand)]
pub enum CollCommand {
    /// List every collective algorithm: id, restrictions and what it does.
    List(ListArgs),
    /// Write one algorithm's schedules for every rank of a communicator as GOAL text.
    ///
    /// Sends and receives carry a tag that numbers the messages of each ordered pair of
    /// ranks; copies and reductions become `calc <bytes>`. Status-based algorithms are run
    /// once in the in-memory executor to resolve their run-time decisions (see --busy).
    Goal(GoalArgs),
}

#[derive(Args)]
pub struct ListArgs {
    /// Only this collective's algorithms (bcast, allgather, ...).
    #[arg(long, value_name = "COLL")]
    collective: Option<String>,
    /// Print the ids only, one per line.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args, Debug)]
pub struct GoalArgs {
    /// Algorithm id, e.g. allgather.double_ring (a bare name such as double_ring is
    /// accepted when only one collective has it); `ferry coll list` shows them all.
    #[arg(short, long, value_name = "ID")]
    algorithm: String,
    /// Number of ranks in the communicator.
    #[arg(short = 'p', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_PROCS as i64))]
    procs: u32,
    /// Root of rooted collectives (bcast, scatter, gather, reduce).
    #[arg(long, value_name = "RANK", default_value_t = 0)]
    root: usize,
    /// Bytes of each rank's block (bcast: the message; alltoall: each rank's block for
    /// each other rank); suffixes K and M allowed.
    #[arg(short, long, value_name = "BYTES", value_parser = parse_size, conflicts_with_all = ["count", "blocks"])]
    bytes: Option<usize>,
    /// Elements of --elem-size bytes in each rank's block (instead of --bytes).
    #[arg(short, long, value_name = "N", conflicts_with = "blocks")]
    count: Option<usize>,
    /// Per-rank block sizes in bytes, comma-separated, for the v-variants (gatherv,
    /// scatterv, allgatherv); every rank knows every block (at run time a non-root of
    /// gatherv/scatterv knows only its own and also sends zero-byte blocks).
    #[arg(long, value_name = "B0,B1,...", value_delimiter = ',', value_parser = parse_size)]
    blocks: Option<Vec<usize>>,
    /// Bytes of one element: reductions split buffers on element boundaries only.
    #[arg(long, value_name = "BYTES", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    elem_size: u32,
    /// Segment size of pipelined algorithms (default: Ferry's, 8192).
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    segment_size: Option<usize>,
    /// Radix of k-ary algorithms such as allgather.k_bruck (default 4).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(2..))]
    radix: Option<u32>,
    /// MPI_IN_PLACE, for algorithms that accept it.
    #[arg(long)]
    in_place: bool,
    /// Ranks that are busy when the collective starts, comma-separated: status-based
    /// algorithms serve them last (the others in rank order first); others ignore it.
    #[arg(long, value_name = "R0,R1,...", value_delimiter = ',')]
    busy: Vec<usize>,
    /// Write the GOAL text to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// A byte count with an optional suffix K, M or G (powers of 1024), as `ferry bench` reads it.
fn parse_size(s: &str) -> Result<usize, String> {
    let v = crate::bench::sizes::parse_size(s)?;
    usize::try_from(v).map_err(|_| format!("{s:?} is too large"))
}

/// Runs a `ferry coll` command; returns the exit status.
pub fn run(cmd: CollCommand) -> i32 {
    match cmd {
        CollCommand::List(args) => match list(&args) {
            Ok(text) => {
                print!("{text}");
                0
            }
            Err(e) => {
                eprintln!("ferry coll list: {e}");
                2
            }
        },
        CollCommand::Goal(args) => match export(&args) {
            Ok(text) => write_goal(&args, &text),
            Err(e) => {
                eprintln!("ferry coll goal: {e}");
                2
            }
        },
    }
}

fn collective_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = algorithms().iter().map(|a| a.collective.name()).collect();
    names.dedup();
    names
}

fn list(args: &ListArgs) -> Result<String, String> {
    let wanted: Option<Collective> = match &args.collective {
        None => None,
        Some(c) => Some(
            algorithms()
                .iter()
                .map(|a| a.collective)
                .find(|k| k.name() == c)
                .ok_or_else(|| format!("unknown collective {c:?}; valid: {}", collective_names().join(", ")))?,
        ),
    };
    let chosen = algorithms().iter().filter(|a| wanted.is_none_or(|w| a.collective == w));
    if args.quiet {
        return Ok(chosen.map(|a| format!("{}\n", a.id)).collect());
    }
    let yes = |b: bool| if b { "yes" } else { "-" }.to_owned();
    let mut rows = vec![["ALGORITHM", "V", "IN_PLACE", "DESCRIPTION", "RESTRICTIONS"].map(str::to_owned).to_vec()];
    for a in chosen {
        rows.push(vec![a.id.to_owned(), yes(a.varying), yes(a.in_place), a.description.to_owned(), a.restrictions.to_owned()]);
    }
    Ok(format!("Collective algorithms (V: accepts per-rank block sizes, the v-variant)\n{}", table(&rows)))
}

/// The algorithm a name means: an exact id, or a bare name that only one collective has.
pub fn find_algorithm(name: &str) -> Result<&'static AlgorithmInfo, String> {
    if let Some(a) = algorithm(name) {
        return Ok(a);
    }
    let bare: Vec<&AlgorithmInfo> =
        algorithms().iter().filter(|a| a.id.split_once('.').is_some_and(|(_, n)| n == name)).collect();
    match bare.as_slice() {
        [one] => Ok(one),
        [] => {
            let ids: Vec<&str> = algorithms().iter().map(|a| a.id).collect();
            Err(format!("unknown algorithm {name:?}; valid: {}", ids.join(", ")))
        }
        many => {
            let ids: Vec<&str> = many.iter().map(|a| a.id).collect();
            Err(format!("algorithm {name:?} is ambiguous; say which: {}", ids.join(", ")))
        }
    }
}

/// The parameters `args` describe, as rank 0 sees them.
fn params(info: &AlgorithmInfo, args: &GoalArgs) -> Result<Params, String> {
    let p = args.procs as usize;
    let elem = args.elem_size as usize;
    if args.root >= p {
        return Err(format!("--root {} is not a rank of {p}", args.root));
    }
    if let Some(r) = args.busy.iter().find(|&&r| r >= p) {
        return Err(format!("--busy names rank {r}, not a rank of {p}"));
    }
    if args.in_place && !info.in_place {
        return Err(format!("{} does not accept MPI_IN_PLACE", info.id));
    }
    let block = match (args.bytes, args.count) {
        (Some(b), _) => Some(b),
        (None, Some(c)) => Some(c.checked_mul(elem).ok_or("--count times --elem-size overflows")?),
        (None, None) => None,
    };
    let mut q = match (&args.blocks, block) {
        (Some(blocks), _) => {
            if !info.varying {
                return Err(format!("{} takes one block size for every rank (it is not a v-variant); use --bytes", info.id));
            }
            if info.collective == Collective::Alltoall {
                // Alltoallv needs a send and a receive layout per rank, not one list.
                return Err(format!("--blocks does not describe an alltoallv; {} takes --bytes", info.id));
            }
            if blocks.len() != p {
                return Err(format!("--blocks gives {} sizes for {p} ranks", blocks.len()));
            }
            let displs = blocks.iter().scan(0, |at, b| Some(std::mem::replace(at, *at + b))).collect();
            Params::varying(0, p, args.root, blocks.clone(), displs)
        }
        (None, Some(b)) => Params::uniform(0, p, args.root, b),
        (None, None) if info.collective == Collective::Barrier => Params::uniform(0, p, args.root, 0),
        (None, None) => return Err(format!("{} needs a size: --bytes, --count or --blocks", info.id)),
    };
    if let Some(b) = q.blocks.iter().find(|&&b| b % elem != 0) {
        return Err(format!("a block of {b} bytes is not a whole number of {elem}-byte elements"));
    }
    q = q.elem_size(elem).in_place(args.in_place);
    if let Some(s) = args.segment_size {
        q = q.segment_size(s);
    }
    if let Some(k) = args.radix {
        q = q.radix(k as usize);
    }
    if !args.busy.is_empty() {
        let mut busy: Vec<usize> = Vec::new();
        for &r in &args.busy {
            if !busy.contains(&r) {
                busy.push(r);
            }
        }
        let order = (0..p).filter(|r| !busy.contains(r)).chain(busy.iter().copied()).collect();
        q = q.free_first(order);
    }
    Ok(q)
}

/// The GOAL text for `args`, checked, with comment lines that say what it is.
pub fn export(args: &GoalArgs) -> Result<String, String> {
    let info = find_algorithm(&args.algorithm)?;
    let q = params(info, args)?;
    let all = goal::resolved_schedules(info, &q).map_err(|e| format!("{}: {e}", info.id))?;
    let cost = (info.cost)(&q);
    let blocks = if q.is_uniform() {
        format!("{} bytes per rank", q.blocks.first().copied().unwrap_or(0))
    } else {
        format!("blocks {:?} bytes", q.blocks)
    };
    let mut comments = vec![
        format!("Ferry {} `ferry coll goal`: {}, {} ranks, {blocks}", env!("CARGO_PKG_VERSION"), info.id, q.size),
        format!(
            "root {}, elem_size {}, segment_size {}, radix {}, in_place {}",
            q.root, q.elem_size, q.segment_size, q.radix, q.in_place
        ),
    ];
    if let Some(order) = &q.free_first {
        comments.push(format!("free-first order (busy ranks last): {order:?}"));
    }
    comments.push(format!(
        "cost: {} rounds, {} messages, {} bytes on the critical path, {} bytes at the busiest rank",
        cost.rounds, cost.messages, cost.bytes, cost.rank_bytes
    ));
    comments.push("tag = index of the message within its ordered pair of ranks; calc <n> = a copy or reduction of n bytes".into());
    let text = goal::to_goal_commented(&all, &comments).map_err(|e| format!("{}: {e}", info.id))?;
    goal::check(&text).map_err(|e| format!("{}: the exported text fails its own check: {e}", info.id))?;
    Ok(text)
}

fn write_goal(args: &GoalArgs, text: &str) -> i32 {
    let Some(path) = &args.output else {
        let mut out = std::io::stdout().lock();
        return match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
            Ok(()) => 0,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            Err(e) => {
                eprintln!("ferry coll goal: writing to standard output: {e}");
                1
            }
        };
    };
    if let Err(e) = std::fs::write(path, text) {
        eprintln!("ferry coll goal: cannot write {}: {e}", path.display());
        return 1;
    }
    let sum = goal::check(text).expect("checked by export");
    eprintln!(
        "ferry coll goal: wrote {}: {} ranks, {} sends, {} receives, {} calcs, {} bytes sent",
        path.display(),
        sum.ranks,
        sum.sends,
        sum.recvs,
        sum.calcs,
        sum.bytes
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(subcommand)]
        coll: CollCommand,
    }

    fn goal_args(args: &[&str]) -> GoalArgs {
        let argv = ["coll", "goal"].iter().chain(args);
        match Cmd::try_parse_from(argv).expect("arguments parse").coll {
            CollCommand::Goal(g) => g,
            CollCommand::List(_) => panic!("not goal"),
        }
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("").is_err() && parse_size("-1").is_err() && parse_size("1T").is_err());
    }

    #[test]
    fn names_resolve_exactly_or_when_unambiguous() {
        assert_eq!(find_algorithm("allgather.double_ring").map(|a| a.id), Ok("allgather.double_ring"));
        assert_eq!(find_algorithm("double_bruck").map(|a| a.id), Ok("allgather.double_bruck"));
        let e = find_algorithm("ring").unwrap_err();
        assert!(e.contains("ambiguous") && e.contains("allgather.ring") && e.contains("allreduce.ring"), "{e}");
        let e = find_algorithm("allgather.triple_ring").unwrap_err();
        assert!(e.starts_with("unknown algorithm") && algorithms().iter().all(|a| e.contains(a.id)), "{e}");
    }

    #[test]
    fn params_follow_the_options() {
        let info = find_algorithm("gather.status_linear").unwrap();
        let q = params(info, &goal_args(&["-a", "x", "-p", "5", "--root", "2", "--count", "3", "--elem-size", "4", "--busy", "1,3,1"])).unwrap();
        assert_eq!((q.size, q.root, q.blocks[4], q.elem_size), (5, 2, 12, 4));
        assert_eq!(q.free_first, Some(vec![0, 2, 4, 1, 3]));
        let info = find_algorithm("allgather.ring").unwrap();
        let q = params(info, &goal_args(&["-a", "x", "-p", "3", "--blocks", "4,0,1K"])).unwrap();
        assert_eq!((q.blocks.clone(), q.displs.clone()), (vec![4, 0, 1024], vec![0, 4, 4]));
        let bad = |info: &str, a: &[&str]| params(find_algorithm(info).unwrap(), &goal_args(a)).unwrap_err();
        assert!(bad("bcast.binomial", &["-a", "x", "-p", "4", "--root", "4", "-b", "8"]).contains("--root 4"));
        assert!(bad("bcast.binomial", &["-a", "x", "-p", "4"]).contains("needs a size"));
        assert!(bad("bcast.binomial", &["-a", "x", "-p", "2", "--blocks", "1,2"]).contains("not a v-variant"));
        assert!(bad("allgather.ring", &["-a", "x", "-p", "3", "--blocks", "1,2"]).contains("2 sizes for 3 ranks"));
        assert!(bad("alltoall.pairwise", &["-a", "x", "-p", "3", "--blocks", "4,0,8"]).contains("alltoallv"));
        assert!(bad("allreduce.ring", &["-a", "x", "-p", "3", "-b", "6", "--elem-size", "4"]).contains("whole number"));
        assert!(bad("bcast.status_binomial", &["-a", "x", "-p", "3", "-b", "6", "--busy", "3"]).contains("rank 3"));
        assert!(bad("bcast.binomial", &["-a", "x", "-p", "3", "-b", "6", "--in-place"]).contains("MPI_IN_PLACE"));
        assert!(params(find_algorithm("barrier.dissemination").unwrap(), &goal_args(&["-a", "x", "-p", "3"])).is_ok());
    }

    #[test]
    fn list_filters_by_collective() {
        let ids = list(&ListArgs { collective: Some("allgather".into()), quiet: true }).unwrap();
        assert_eq!(ids.lines().count(), ferry_coll::algorithms_for(Collective::Allgather).count());
        assert!(ids.lines().all(|l| l.starts_with("allgather.")));
        let all = list(&ListArgs { collective: None, quiet: false }).unwrap();
        assert!(algorithms().iter().all(|a| all.contains(a.id) && all.contains(a.restrictions)));
        assert!(list(&ListArgs { collective: Some("allfoo".into()), quiet: false }).unwrap_err().contains("bcast"));
    }

    /// Every registered algorithm exports for a spread of sizes, roots and block sizes.
    #[test]
    fn every_algorithm_exports_well_formed_text() {
        for a in algorithms() {
            for p in [1, 2, 3, 5, 8, 13] {
                for bytes in ["0", "4", "4000"] {
                    let root = (p - 1).to_string();
                    let p = p.to_string();
                    let args = goal_args(&["-a", a.id, "-p", &p, "--root", &root, "-b", bytes, "--elem-size", "4"]);
                    let text = export(&args).unwrap_or_else(|e| panic!("{} p={p} bytes={bytes}: {e}", a.id));
                    let sum = goal::check(&text).unwrap();
                    assert_eq!(sum.ranks.to_string(), p);
                }
            }
        }
    }
}
