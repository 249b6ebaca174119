//! Bytes steer a generator of mostly well-formed Viper programs (see `generate`), so that
//! inputs get past the parser and exercise macro expansion and the type checker.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let program = germanium_fuzz::generate::program(data);
    germanium_fuzz::run_front_end(&program);
});
