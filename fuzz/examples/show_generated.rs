//! Prints the program the `generated_programs` target builds from a fuzz input, e.g. a crash
//! artifact: `cargo run --example show_generated -- artifacts/generated_programs/crash-...`.

fn main() {
    let path = std::env::args().nth(1).expect("usage: show_generated FILE");
    let data = std::fs::read(&path).expect("readable input file");
    print!("{}", germanium_fuzz::generate::program(&data));
}
