//! `germanium lsp` end to end with a real editor: headless Neovim (Debian's package, which
//! `scripts/test` installs) runs tests/editors/neovim/diagnostics_follow_edits.lua against
//! this build's binary. The script opens a file, waits for the diagnostics, edits the
//! buffer and checks that they follow, and asks for hover, code lenses, symbols and a
//! definition.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROGRAM: &str = "field val: Int
method inc(x: Ref) requires acc(x.val) ensures acc(x.val) {
  x.val := x.val + 1
  assert x.val > 1
}
function get(x: Ref): Int requires acc(x.val) { x.val }
";

#[test]
fn neovim_sees_diagnostics_that_follow_its_edits() {
    let nvim = which("nvim").expect(
        "Neovim (`nvim`) is needed for this test: `apt-get install neovim` (scripts/test \
         installs it)",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inc.vpr");
    std::fs::write(&file, PROGRAM).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/editors/neovim/diagnostics_follow_edits.lua");
    let mut child = Command::new(nvim)
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("GERMANIUM_BIN", env!("CARGO_BIN_EXE_germanium"))
        .env("GERMANIUM_TEST_FILE", &file)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Neovim starts");
    // The script has its own time limits; this one only keeps a hung editor from hanging CI.
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("Neovim did not finish within 10 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
    assert!(
        status.success(),
        "Neovim's script failed ({status}):\n{said}"
    );
    for step in [
        "ok: diagnostic on open at line 4",
        "ok: hover shows the reason and a counterexample",
        "ok: code lenses",
        "ok: symbols val, inc, get",
        "ok: the edit cleared the diagnostics",
        "ok: the second edit moved the diagnostic to line 6",
        "ok: saved",
    ] {
        assert!(said.contains(step), "missing `{step}` in:\n{said}");
    }
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("ensures result > 0"), "{saved}");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}
