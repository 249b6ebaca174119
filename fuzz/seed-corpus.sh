#!/bin/sh
# Seeds fuzz/corpus/front_end (gitignored) with the small Viper files of the shared test
# corpus, read in place from ../shared (never committed here). Run from the fuzz directory.
set -eu
shared="${1:-../../shared}"
mkdir -p corpus/front_end corpus/generated_programs
find "$shared/viper-tests" "$shared/seed-tests" -name '*.vpr' -size -4k | while read -r file; do
    # Name by content so reseeding does not duplicate.
    cp "$file" "corpus/front_end/$(sha1sum "$file" | cut -c1-40)"
done
echo "front_end corpus: $(ls corpus/front_end | wc -l) inputs"
