//! Progress of the runs on stderr: a bar with an estimate of the time left on a terminal,
//! one plain line per finished run otherwise (a log file or a pipe gets no control codes).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

pub enum Progress {
    Bar(ProgressBar),
    Lines { total: u64, done: u64, start: Instant },
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress::Lines { total, done: 0, start: Instant::now() };
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} ETA {eta:>4}  {msg}")
                .expect("the template is valid")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress::Bar(bar)
    }

    /// A run starts: `what` names it.
    pub fn start(&mut self, what: &str) {
        if let Progress::Bar(bar) = self {
            bar.set_message(what.to_owned());
        }
    }

    /// A run ended: `what` names it, `result` says how it went.
    pub fn finish(&mut self, what: &str, result: &str) {
        match self {
            Progress::Bar(bar) => bar.inc(1),
            Progress::Lines { total, done, start } => {
                *done += 1;
                let left = if *done < *total {
                    let per_run = start.elapsed().as_secs_f64() / *done as f64;
                    format!(", about {} left", duration(per_run * (*total - *done) as f64))
                } else {
                    String::new()
                };
                eprintln!("[{done}/{total}] {what}: {result}{left}");
            }
        }
    }

    /// A message that must not be garbled by the bar.
    pub fn println(&self, text: &str) {
        match self {
            Progress::Bar(bar) => bar.suspend(|| eprintln!("{text}")),
            Progress::Lines { .. } => eprintln!("{text}"),
        }
    }

    pub fn done(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// `75 s`, `3 min 5 s`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(0.4), "0 s");
        assert_eq!(duration(59.6), "1 min 0 s");
        assert_eq!(duration(185.0), "3 min 5 s");
    }
}
