//! `ferry`: Ferry's command line. `ferry run` launches MPI jobs on this host (it is what
//! `mpiexec` runs); `ferry info` shows the build and its configuration; `ferry coll` lists
//! the collective algorithms and exports their schedules as GOAL text; `ferry sim` runs
//! them in the simulator; `ferry bench` runs the benchmarks under Ferry and other MPI
//! implementations side by side; `ferry fit` fits performance models to the results;
//! `ferry proxy` relays connections into a private cluster from its front node.

mod bench;
mod coll;
mod fit;
mod info;
mod launcher;
mod proxy;
mod sim;
mod tune;

use std::ffi::OsString;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "ferry", version, about = "Ferry: an MPI runtime")]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Start N copies of PROGRAM on this host as one MPI job and wait for them.
    ///
    /// Exit status: 0 when every rank exits 0; else the first failing rank's exit code,
    /// 128+N for a rank killed by signal N, the MPI_Abort code, 1 when a rank exits without
    /// MPI_Finalize, 124 on --timeout, 127 when PROGRAM is not found.
    ///
    /// Every rank finds in its environment PMI_FD, PMI_RANK and PMI_SIZE (its line to the
    /// launcher), MPI_LOCALRANKID and MPI_LOCALNRANKS, and FERRY_RANK and FERRY_SIZE (its
    /// rank and the number of ranks, e.g. for an MCAPI program to choose its node id).
    Run(RunArgs),
    /// Show the build, and every FERRY_* knob with its value, default and meaning.
    Info,
    /// Collective algorithms: list them, export their schedules as GOAL text.
    #[command(subcommand)]
    Coll(coll::CollCommand),
    /// Simulate collectives under LogGP/nLogP: compare algorithms, run the status study.
    #[command(subcommand)]
    Sim(sim::SimCommand),
    /// Fit Hockney, LogGP and nLogP to benchmark results; write the parameter file.
    ///
    /// Hockney needs latency rows; LogGP shift.* rows at 2 ranks (prtt.* rows give g and a
    /// cross-check, else latency rows separate L from g); nLogP shift.* rows at several rank
    /// counts; the Jacobi prediction jacobi.* rows. Exit status: 0 when the parameter file
    /// was produced, 1 when the rows allow none (the report says why), 2 for bad input.
    Fit(fit::FitArgs),
    /// Run the benchmark programs of bench/ under Ferry and other MPIs, side by side.
    ///
    /// Each program is built with each implementation's own compiler into
    /// build/bench/<impl>/ and run --runs times, the implementations alternating run by run.
    /// Results (median, min, max over runs) go to results.csv and results.json in --out.
    /// Exit status: 0; 1 when a build or run failed (the others still count); 2 when nothing
    /// could start (bad options, no implementation).
    Bench(bench::BenchArgs),
    /// Build a decision table for this machine: predict, measure, pick the fastest.
    ///
    /// For each collective, rank count and size: every candidate algorithm in the simulator
    /// (--params from `ferry fit`, else --preset), then the --top fastest predicted and the
    /// base table's choice measured with bench/coll.c under `ferry run`, alternating, median
    /// of --runs. Writes the winners as a table for FERRY_COLL_TABLE (the base table's rows
    /// after them) and prints predicted against measured times. Exit status: 0; 2 when the
    /// options are bad or a build or run failed.
    Tune(tune::TuneArgs),
    /// Relay connections into this private cluster for registered jobs (run on its front node).
    Proxy(proxy::ProxyArgs),
    /// The agent of a job across hosts, started by `ferry run` on each host through the
    /// launcher template; it speaks to the head over its stdin and stdout.
    #[command(hide = true)]
    Agent,
}

#[derive(Args)]
struct RunArgs {
    /// Number of ranks (also -np N).
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    ranks: u32,
    /// Prefix every line a rank prints with "[RANK] ".
    #[arg(long)]
    tag_output: bool,
    /// Kill the job if it is still running after SECONDS (exit status 124).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// Set an environment variable in every rank (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse_env_assignment)]
    env: Vec<(String, String)>,
    /// Run across the hosts FILE lists, one per line: `HOST [slots=K] [front=NAME]`, and
    /// `proxy ADDR:PORT front=NAME` for a relay serving a private cluster (docs/clusters.md).
    #[arg(long, value_name = "FILE", conflicts_with = "host")]
    hostfile: Option<std::path::PathBuf>,
    /// Run across these hosts: `a,b:2,c` (`:K` slots; default 1).
    #[arg(long, value_name = "LIST")]
    host: Option<String>,
    /// How an agent is started on a host: a command prefix where `{host}` is replaced and
    /// to which `ferry agent` is appended.
    #[arg(long, value_name = "TEMPLATE", default_value = "ssh {host}")]
    launcher: String,
    /// The order of ranks over the hosts: `given` (the hostfile's) or `public-first`
    /// (private hosts get the higher ranks and open their connections outward).
    #[arg(long, value_name = "POLICY", default_value = "given", value_parser = ["given", "public-first"])]
    rank_policy: String,
    /// Print the host of every rank and the path of every connection once the job has
    /// started (jobs across hosts).
    #[arg(long)]
    show_paths: bool,
    /// How many processes this run may hold at once, spawned children included
    /// (`MPI_UNIVERSE_SIZE`; default: -n or the number of cores, whichever is larger).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    universe_size: Option<u32>,
    /// The site key file (mode 0600) of the relays the hostfile lists (`ferry proxy`).
    #[arg(long, value_name = "FILE")]
    proxy_key: Option<std::path::PathBuf>,
    /// Fault-tolerant MPI (docs/fault-tolerance.md): a rank's death does not end the job; the
    /// other ranks get errors (MPIX_ERR_PROC_FAILED) and may recover (MPIX_Comm_shrink). The
    /// launcher still exits non-zero, naming the dead ranks. Sets FERRY_RECOVERY=1 in every
    /// rank.
    #[arg(long)]
    enable_recovery: bool,
    /// The program to run and its arguments.
    #[arg(value_name = "PROGRAM", required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<OsString>,
}

/// The hosts of a job across hosts, when `--hostfile` or `--host` names them.
fn hosts_options(run: &RunArgs) -> Result<Option<launcher::head::HostsOptions>, String> {
    use launcher::hosts;
    let list = match (&run.hostfile, &run.host) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            hosts::parse_hostfile(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        (None, Some(list)) => hosts::parse_host_list(list).map_err(|e| format!("--host {list}: {e}"))?,
        (None, None) => {
            if run.show_paths || run.rank_policy != "given" {
                return Err("--show-paths and --rank-policy go with --hostfile or --host".into());
            }
            return Ok(None);
        }
    };
    let policy = if run.rank_policy == "public-first" { hosts::RankPolicy::PublicFirst } else { hosts::RankPolicy::Given };
    Ok(Some(launcher::head::HostsOptions { list, launcher: run.launcher.clone(), policy, show_paths: run.show_paths, proxy_key: run.proxy_key.clone() }))
}

fn parse_env_assignment(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

/// MPICH and Open MPI users type `-np N`, which clap cannot take as a short option: turn it
/// into `--np N`, but only among `ferry run`'s own options, never in the program's arguments.
fn translate_np(mut args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).map(|a| a != "run").unwrap_or(true) {
        return args;
    }
    let mut i = 2;
    while i < args.len() {
        match args[i].to_str() {
            Some("-np") => {
                args[i] = OsString::from("--np");
                i += 2;
            }
            Some("-n" | "--np" | "--timeout" | "--env" | "--hostfile" | "--host" | "--launcher" | "--rank-policy" | "--proxy-key") => i += 2,
            Some("--") => break,
            Some(a) if a.starts_with('-') => i += 1,
            _ => break, // the program: the rest is its own
        }
    }
    args
}

fn main() {
    let cli = Cli::parse_from(translate_np(std::env::args_os().collect()));
    let code = match cli.command {
        Commands::Run(run) => {
            let hosts = match hosts_options(&run) {
                Ok(h) => h,
                Err(e) => {
                    eprintln!("ferry run: {e}");
                    std::process::exit(2);
                }
            };
            let mut command = run.command.into_iter();
            let program = command.next().expect("clap requires PROGRAM");
            let mut env = run.env;
            if run.enable_recovery {
                env.push((ferry_core::config::RECOVERY.name.to_owned(), "1".to_owned()));
            }
            let opts = launcher::RunOptions {
                ranks: run.ranks,
                tag_output: run.tag_output,
                timeout: run.timeout.map(Duration::from_secs),
                env,
                recovery: run.enable_recovery,
                universe_size: run.universe_size,
                // A singleton that spawns starts this run with its port in the environment.
                parent_port: ferry_core::config::PARENT_PORT.is_set().then(|| ferry_core::config::PARENT_PORT.value()),
                program,
                args: command.collect(),
            };
            match hosts {
                Some(h) => launcher::head::run(&opts, h),
                None => launcher::run(opts),
            }
        }
        Commands::Agent => launcher::agent::run(),
        Commands::Info => {
            print!("{}", info::render());
            0
        }
        Commands::Coll(cmd) => coll::run(cmd),
        Commands::Sim(cmd) => sim::run(cmd),
        Commands::Fit(args) => fit::run(&args),
        Commands::Bench(args) => bench::run(args),
        Commands::Tune(args) => tune::run(&args),
        Commands::Proxy(args) => proxy::run(args),
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<OsString> {
        s.iter().map(OsString::from).collect()
    }

    #[test]
    fn np_is_translated_only_before_the_program() {
        assert_eq!(
            translate_np(args(&["ferry", "run", "-np", "4", "prog", "-np", "2"])),
            args(&["ferry", "run", "--np", "4", "prog", "-np", "2"])
        );
        assert_eq!(
            translate_np(args(&["ferry", "run", "--tag-output", "--env", "A=-np", "-np", "2", "p"])),
            args(&["ferry", "run", "--tag-output", "--env", "A=-np", "--np", "2", "p"])
        );
        assert_eq!(translate_np(args(&["ferry", "info", "-np"])), args(&["ferry", "info", "-np"]));
    }

    #[test]
    fn run_arguments_parse() {
        let cli = Cli::try_parse_from(translate_np(args(&[
            "ferry",
            "run",
            "-np",
            "3",
            "--timeout",
            "9",
            "prog",
            "--tag-output",
            "-n",
            "1",
        ])))
        .unwrap();
        let Commands::Run(run) = cli.command else { panic!("not run") };
        assert_eq!((run.ranks, run.timeout, run.tag_output), (3, Some(9), false));
        assert_eq!(run.command, args(&["prog", "--tag-output", "-n", "1"]));
        assert!(Cli::try_parse_from(args(&["ferry", "run", "-n", "0", "prog"])).is_err());
        assert!(Cli::try_parse_from(args(&["ferry", "run", "-n", "2"])).is_err());
        assert!(Cli::try_parse_from(args(&["ferry", "run", "prog"])).is_err());
        assert!(Cli::try_parse_from(args(&["ferry", "run", "-n", "2", "--env", "NOEQUALS", "prog"])).is_err());
        let cli = Cli::try_parse_from(args(&["ferry", "run", "-n", "2", "--env", "A=b=c", "--env", "B=", "prog"])).unwrap();
        let Commands::Run(run) = cli.command else { panic!("not run") };
        assert_eq!(run.env, [("A".to_owned(), "b=c".to_owned()), ("B".to_owned(), String::new())]);
    }
}
