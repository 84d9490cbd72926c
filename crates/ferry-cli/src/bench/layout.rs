//! Where `ferry bench` finds its inputs: the benchmark sources, Ferry's `mpicc`, the `ferry`
//! launcher and `libmpi.so.12`, either in a repository (built with `make build`) or in an
//! installed prefix (`make install`), and where it writes its builds and results.

use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The directory that holds `bench/` (the repository, or `<prefix>/share/ferry`).
    pub sources: PathBuf,
    pub mpicc: PathBuf,
    pub ferry: PathBuf,
    pub libmpi: PathBuf,
    /// Where `build/bench/` goes: the repository, or the current directory when installed.
    pub work: PathBuf,
    /// What to do when one of the tools is missing.
    pub hint: &'static str,
}

impl Layout {
    /// A repository with its programs built by `make build`.
    pub fn repository(repo: &Path) -> Layout {
        Layout {
            sources: repo.to_path_buf(),
            mpicc: repo.join("bin/mpicc"),
            ferry: repo.join("target/release/ferry"),
            libmpi: repo.join("lib/libmpi.so.12"),
            work: repo.to_path_buf(),
            hint: "run make build",
        }
    }

    /// An installed prefix (`<prefix>/bin/ferry`, `<prefix>/share/ferry/bench`), writing
    /// into `work`.
    pub fn installed(prefix: &Path, work: &Path) -> Layout {
        Layout {
            sources: prefix.join("share/ferry"),
            mpicc: prefix.join("bin/mpicc"),
            ferry: prefix.join("bin/ferry"),
            libmpi: prefix.join("lib/libmpi.so.12"),
            work: work.to_path_buf(),
            hint: "reinstall Ferry",
        }
    }

    /// `--repo DIR` when given; else the current directory when it is a repository; else the
    /// prefix or repository this executable belongs to.
    pub fn find(repo: Option<&Path>, cwd: &Path, exe: Option<&Path>) -> Result<Layout, String> {
        let has_sources = |dir: &Path| dir.join("bench/benchutil.h").is_file();
        if let Some(repo) = repo {
            let repo = cwd.join(repo);
            if !has_sources(&repo) {
                return Err(format!("{} has no bench/benchutil.h: give the Ferry repository", repo.display()));
            }
            return Ok(Layout::repository(&repo));
        }
        if has_sources(cwd) {
            return Ok(Layout::repository(cwd));
        }
        // <prefix>/bin/ferry, or <repo>/target/release/ferry.
        let bin = exe.and_then(Path::parent);
        if let Some(prefix) = bin.and_then(Path::parent) {
            if has_sources(&prefix.join("share/ferry")) {
                return Ok(Layout::installed(prefix, cwd));
            }
            if let Some(repo) = prefix.parent().filter(|r| has_sources(r)) {
                return Ok(Layout::repository(repo));
            }
        }
        Err(format!(
            "no benchmark sources: {} is not the Ferry repository and this ferry is neither installed \
             with share/ferry/bench nor built in a repository; give --repo DIR",
            cwd.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(files: &[&str]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("ferry-layout-{}-{}", std::process::id(), files.len()));
        let _ = fs::remove_dir_all(&root);
        for f in files {
            let p = root.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        root
    }

    #[test]
    fn finds_the_repository_or_the_prefix_the_executable_is_in() {
        let t = tree(&["repo/bench/benchutil.h", "prefix/share/ferry/bench/benchutil.h", "elsewhere/x"]);
        let (repo, prefix, elsewhere) = (t.join("repo"), t.join("prefix"), t.join("elsewhere"));

        let from_repo = Layout::find(None, &repo, Some(&prefix.join("bin/ferry"))).unwrap();
        assert_eq!(from_repo, Layout::repository(&repo));

        let installed = Layout::find(None, &elsewhere, Some(&prefix.join("bin/ferry"))).unwrap();
        assert_eq!(installed.sources, prefix.join("share/ferry"));
        assert_eq!(installed.mpicc, prefix.join("bin/mpicc"));
        assert_eq!(installed.libmpi, prefix.join("lib/libmpi.so.12"));
        assert_eq!(installed.work, elsewhere);

        let built = Layout::find(None, &elsewhere, Some(&repo.join("target/release/ferry"))).unwrap();
        assert_eq!(built, Layout::repository(&repo));

        let given = Layout::find(Some(Path::new("repo")), &t, Some(&prefix.join("bin/ferry"))).unwrap();
        assert_eq!(given, Layout::repository(&repo));

        assert!(Layout::find(None, &elsewhere, Some(&elsewhere.join("bin/ferry"))).is_err());
        assert!(Layout::find(Some(&elsewhere), &t, None).is_err());
        fs::remove_dir_all(&t).unwrap();
    }
}
