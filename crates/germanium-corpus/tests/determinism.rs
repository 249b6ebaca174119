//! The same file gives the same answer however it is run: with one worker alone, and with
//! two workers and three CPU-heavy processes competing for the machine's cores. Solver
//! queries are bounded by Z3's resource count, not by the clock, and members are verified in
//! sessions fixed by the program, so neither load nor scheduling may change a single
//! diagnostic.
//!
//! The files are among the corpus's most solver-intensive: a query needing 21 million
//! resource units (about two seconds alone, over five under load), a sequence query that
//! is slow in some solver histories, recursive functions over lists, and a query that
//! runs into the solver's memory limit; two files of quantified permissions; and two files
//! of the pass list whose slowest queries are closest to the wall clock
//! (`fmse-2015-04-16.vpr`, whose full budget took 5.8 s, and `parallel_max.vpr`; a loaded
//! machine once turned the first's verdict through the clock). `bsearch.vpr`, as close, is
//! left to the corpus test, which verifies it while both back ends load the machine: its
//! runs here took seven of the test suite's minutes.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use germanium_corpus::corpus::SharedPaths;
use germanium_driver::{run_file, Mode, Options};

const FILES: &[&str] = &[
    "viper-tests/all/third_party/stefan_recent/testTreeWand.vpr",
    "viper-tests/all/sequences/sequences.vpr",
    "viper-tests/all/functions/linkedlists.vpr",
    "viper-tests/all/issues/silicon/0045.vpr",
    // Quantified permissions: inverse functions, snapshots of footprints, chunk choice.
    "viper-tests/quantifiedpermissions/third_party/testTranspose.vpr",
    "viper-tests/quantifiedpermissions/sequences/mergesort.vpr",
    // Closest to the clock.
    "viper-tests/quantifiedpermissions/third_party/fmse-2015-04-16.vpr",
    "viper-tests/quantifiedpermissions/sequences/parallel_max.vpr",
];

/// Everything a user sees of a file's result but the time.
fn verdict(path: &Path, jobs: usize, import: &Path) -> Vec<String> {
    let mut options = Options::new(Mode::Verify);
    options.jobs = jobs;
    options.import_paths = vec![import.to_path_buf()];
    let report = run_file(path, &options);
    let mut out: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| {
            let at = report.sources.start(d.span);
            format!("{}:{}: {} {}", at.line, at.column, d.id, d.message)
        })
        .collect();
    out.sort();
    out
}

/// Busy processes, stopped when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start(n: usize) -> Load {
        Load(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("a shell")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn verdicts_do_not_depend_on_workers_or_machine_load() {
    let shared = SharedPaths::from_crate_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
    let import = shared.import_path();
    for file in FILES {
        let path = shared.root.join(file);
        let alone = verdict(&path, 1, &import);
        let loaded = {
            let _load = Load::start(3);
            verdict(&path, 2, &import)
        };
        assert_eq!(
            alone, loaded,
            "{file}: the answer alone with one worker and under load with two differ"
        );
    }
}
