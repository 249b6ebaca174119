//! Chunks as text, for the execution log.

use crate::state::{Heap, Resource};

/// Every chunk of `heap` as text, in heap order, for the execution log.
pub fn chunk_views(heap: &Heap) -> Vec<crate::trace::ChunkView> {
    heap.chunks
        .iter()
        .map(|c| {
            let kind = match c.resource {
                Resource::Field(_) => "field",
                Resource::Predicate(_) => "predicate",
                Resource::Wand(_) => "wand",
            };
            let (kind, args) = if c.is_quantified() {
                let vars = c.vars.iter().map(|(v, s)| format!("{v}: {s}"));
                (format!("quantified {kind}"), vars.collect())
            } else {
                (
                    kind.to_string(),
                    c.args.iter().map(|a| a.to_string()).collect(),
                )
            };
            crate::trace::ChunkView {
                kind,
                name: c.resource.name().to_string(),
                args,
                amount: c.perm.0.to_string(),
                snapshot: c.snap.to_string(),
            }
        })
        .collect()
}
