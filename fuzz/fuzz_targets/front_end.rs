//! Arbitrary bytes through the front end: parse, expand macros, type-check.
//!
//! Bytes that are not UTF-8 are decoded lossily rather than discarded, so mutations that
//! break the encoding still exercise the lexer (the loader rejects such files before parsing,
//! so U+FFFD is what the parser can really meet).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    germanium_fuzz::run_front_end(&text);
});
